/*
 * pg_escape: escaping wire messages for text files.  See pg_escape.h.
 */
#include "wire/pg_escape.h"

size_t pg_escaped_max(size_t len)
{
    return len * 4 + 1;
}

size_t pg_escape(const char *in, size_t len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)in[i];
        int last = i + 1 == len;

        if (ch == '\\' || ch == '\n' || ch == '\r' || ch == '\t') {
            out[o++] = '\\';
            out[o++] = ch == '\\' ? '\\' : ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't';
        } else if (ch > 0x20 && ch < 0x7f) {
            out[o++] = (char)ch;
        } else if (ch == ' ' && !last) {
            out[o++] = ' '; /* a final space would vanish in editors: escaped */
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
    return o;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int pg_unescape(const char *in, size_t len, char *out, size_t *outlen)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        if (in[i] != '\\') {
            out[o++] = in[i];
            continue;
        }
        if (++i >= len)
            return -1;
        switch (in[i]) {
        case '\\': out[o++] = '\\'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'x': {
            int hi = i + 2 < len ? hex_digit(in[i + 1]) : -1;
            int lo = hi >= 0 ? hex_digit(in[i + 2]) : -1;

            if (lo < 0)
                return -1;
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
            break;
        }
        default:
            return -1;
        }
    }
    *outlen = o;
    return 0;
}
