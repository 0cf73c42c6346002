/* policy/num.h -- The one decimal parser of vpower.
 *
 * Every whole number vpower reads from text (configuration, energy
 * models, sysfs files, the control protocol, the journal, command lines,
 * recordings) goes through num_parse_u64(), so all of them accept and
 * refuse the same things: digits only, at least one, no sign, no
 * leading space, no "0x", nothing after the digits (callers that read
 * kernel files strip the trailing newline first, see num_parse_line()).
 * Pure: no I/O, no errno, no locale. */

#ifndef VPOWER_NUM_H
#define VPOWER_NUM_H 1

#include <stdint.h>

/* Parses the whole string 's' as a decimal number no greater than 'max'.
 * Returns 0 with '*out' set, -EINVAL if 's' is NULL, empty or holds
 * anything but digits, -ERANGE if the number exceeds 'max'.  '*out' is
 * untouched on error. */
int num_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* The same for a line read from a kernel file: trailing spaces and
 * newlines after the digits are allowed. */
int num_parse_line(const char *s, uint64_t max, uint64_t *out);

#endif
