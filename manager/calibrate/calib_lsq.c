/* manager/calibrate/calib_lsq.c -- Linear least squares for the calibration
 * fit.
 *
 * See calib_lsq.h.  The normal equations square the condition number,
 * which is harmless here: the columns are counts of cores (at most a few
 * hundred) and 0/1 indicators, and the powers are known to a few digits
 * at best. */

#include <config.h>

#include "manager/calibrate/calib_lsq.h"

#include <errno.h>
#include <math.h>

#define N CALIB_LSQ_MAX_COLS

int
calib_lsq_solve(const double *a, const double *b, size_t n_rows,
                size_t n_cols, double *x)
{
    double m[N][N + 1];
    double scale = 0;

    if (!n_cols || n_cols > N || n_rows < n_cols) {
        return -EINVAL;
    }
    for (size_t i = 0; i < n_cols; i++) {
        for (size_t j = 0; j <= n_cols; j++) {
            double s = 0;

            for (size_t r = 0; r < n_rows; r++) {
                s += a[r * n_cols + i]
                     * (j < n_cols ? a[r * n_cols + j] : b[r]);
            }
            m[i][j] = s;
        }
        if (fabs(m[i][i]) > scale) {
            scale = fabs(m[i][i]);
        }
    }
    for (size_t c = 0; c < n_cols; c++) {
        size_t p = c;

        for (size_t r = c + 1; r < n_cols; r++) {
            if (fabs(m[r][c]) > fabs(m[p][c])) {
                p = r;
            }
        }
        /* A pivot this small relative to the largest diagonal means the
         * column is a combination of the others. */
        if (fabs(m[p][c]) <= scale * 1e-10) {
            return -EDOM;
        }
        for (size_t j = 0; j <= n_cols; j++) {
            double t = m[c][j];

            m[c][j] = m[p][j];
            m[p][j] = t;
        }
        for (size_t r = 0; r < n_cols; r++) {
            double f;

            if (r == c) {
                continue;
            }
            f = m[r][c] / m[c][c];
            for (size_t j = c; j <= n_cols; j++) {
                m[r][j] -= f * m[c][j];
            }
        }
    }
    for (size_t i = 0; i < n_cols; i++) {
        x[i] = m[i][n_cols] / m[i][i];
    }
    return 0;
}
