/* manager/control/jsonget.c -- Tolerant field access to control-socket
 * results: absent or mistyped fields give the caller's default. */

#include <config.h>

#include "manager/control/jsonget.h"

#include <json-c/json.h>

struct json_object *
jsonget_field(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;

    if (!o || !json_object_is_type(o, json_type_object)
        || !json_object_object_get_ex(o, key, &v)) {
        return NULL;
    }
    return v;
}

const char *
jsonget_str(struct json_object *o, const char *key, const char *dflt)
{
    struct json_object *v = jsonget_field(o, key);

    return v && json_object_is_type(v, json_type_string)
           ? json_object_get_string(v) : dflt;
}

bool
jsonget_num(struct json_object *o, const char *key, double *out)
{
    struct json_object *v = jsonget_field(o, key);

    if (v && (json_object_is_type(v, json_type_int)
              || json_object_is_type(v, json_type_double))) {
        *out = json_object_get_double(v);
        return true;
    }
    if (v && json_object_is_type(v, json_type_boolean)) {
        *out = json_object_get_boolean(v) ? 1 : 0;
        return true;
    }
    return false;
}

double
jsonget_num_or(struct json_object *o, const char *key, double dflt)
{
    double v;

    return jsonget_num(o, key, &v) ? v : dflt;
}

int64_t
jsonget_int(struct json_object *o, const char *key, int64_t dflt)
{
    struct json_object *v = jsonget_field(o, key);

    if (v && (json_object_is_type(v, json_type_int)
              || json_object_is_type(v, json_type_double)
              || json_object_is_type(v, json_type_boolean))) {
        return json_object_get_int64(v);
    }
    return dflt;
}

bool
jsonget_bool(struct json_object *o, const char *key)
{
    double v;

    return jsonget_num(o, key, &v) && v != 0;
}

struct json_object *
jsonget_arr(struct json_object *o, const char *key)
{
    struct json_object *v = jsonget_field(o, key);

    return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

size_t
jsonget_len(struct json_object *a)
{
    return a && json_object_is_type(a, json_type_array)
           ? json_object_array_length(a) : 0;
}
