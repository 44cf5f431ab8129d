/*
 * pg_decimal: the strict decimal integer of pmigate's command lines
 * (`pmigate run -n 4`, `pmigate trace show --rank 3`): digits only, no
 * sign, space or suffix, within a range the caller names.  One definition
 * for the gateway's and the trace tools' parsers, so "4x", " 4", "-1" and
 * "99999999999" are refused the same way everywhere.
 *
 * Header-only, like wire/pg_io.h: it sits in wire/ only because that is
 * the lowest room both gateway/ and trace/ include.
 */
#ifndef PG_DECIMAL_H
#define PG_DECIMAL_H

#include <errno.h>
#include <stdlib.h>

/* Sets *out to the value of s and returns 0 when s is a decimal within
 * min..max (0 <= min <= max <= INT_MAX); returns -1 otherwise (NULL too). */
static inline int pg_decimal_parse(const char *s, long min, long max, int *out)
{
    char *end;
    long v;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

#endif
