/* manager/calibrate/calib_lsq.h -- Linear least squares for the calibration
 * fit.
 *
 * vpower-calibrate measures host power at a few dozen states and fits
 * a handful of unknowns (a floor, package wake-up power, busy power per
 * operating point, idle power per state) linear in the state.  The
 * problem is small (at most CALIB_LSQ_MAX_COLS unknowns), so it is
 * solved the plain way: normal equations A^T A x = A^T b with Gaussian
 * elimination and partial pivoting.  No allocation, no I/O. */

#ifndef VPOWER_CALIB_LSQ_H
#define VPOWER_CALIB_LSQ_H 1

#include <stddef.h>

#define CALIB_LSQ_MAX_COLS 64

/* Solves min |A x - b|^2 for 'a' (n_rows x n_cols, row-major), 'b'
 * (n_rows) into 'x' (n_cols).  Returns 0, -EINVAL for a bad size
 * (n_cols 0 or above CALIB_LSQ_MAX_COLS, n_rows < n_cols) or -EDOM when
 * the columns are linearly dependent (an unknown the rows cannot
 * separate from the others); 'x' is then undefined. */
int calib_lsq_solve(const double *a, const double *b, size_t n_rows,
                    size_t n_cols, double *x);

#endif /* manager/calibrate/calib_lsq.h */
