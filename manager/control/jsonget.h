/* manager/control/jsonget.h -- Tolerant field access to the JSON results
 * of vpowerd's control socket, for its clients (vpowerctl, the exporter).
 *
 * A client may talk to an older or newer daemon, so a field may be
 * missing or of another type.  Every accessor takes a possibly NULL
 * object, never fails and says what it returns then; none takes a
 * reference (results are borrowed from 'o'). */

#ifndef VPOWER_JSONGET_H
#define VPOWER_JSONGET_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* Field 'key' of 'o'; NULL if 'o' is NULL, not an object, or lacks it. */
struct json_object *jsonget_field(struct json_object *o, const char *key);

/* String field 'key', or 'dflt' if absent or not a string. */
const char *jsonget_str(struct json_object *o, const char *key,
                        const char *dflt);

/* Number field 'key' (integer, double, or boolean as 1 / 0) into '*out';
 * false with '*out' untouched if absent or of another type. */
bool jsonget_num(struct json_object *o, const char *key, double *out);

/* Number field 'key' as a double, or 'dflt'. */
double jsonget_num_or(struct json_object *o, const char *key, double dflt);

/* Number field 'key' as an integer (doubles truncated), or 'dflt'. */
int64_t jsonget_int(struct json_object *o, const char *key, int64_t dflt);

/* True if field 'key' is true (or a non-zero number); false otherwise. */
bool jsonget_bool(struct json_object *o, const char *key);

/* Array field 'key'; NULL if absent or not an array. */
struct json_object *jsonget_arr(struct json_object *o, const char *key);

/* Length of array 'a'; 0 if 'a' is NULL or not an array. */
size_t jsonget_len(struct json_object *a);

#endif /* manager/control/jsonget.h */
