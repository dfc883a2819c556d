/*
 * fmt.c - "%.9g" without printf, for the rows of large sweeps (where glibc's conversion is half
 * of the CPU time). The result is byte for byte what snprintf("%.9g") writes: the value is
 * scaled by an exact power of ten (one correctly rounded operation, relative error at most
 * 2^-53), and whenever the nine-digit rounding could depend on that error (the scaled value
 * within 1e-6 of a rounding boundary), or the exponent is beyond the exact powers of ten, it
 * defers to snprintf. tests/test_fmt.c compares the two over millions of values. Beside it, the
 * tables' numbers and sizes (fmt_table, fmt_size, and fmt_bytes for every count of bytes a view
 * prints: the unit chosen by its magnitude).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int slow(double v, char *out)
{
    return snprintf(out, FMT_G9_MAX, "%.9g", v);
}

int fmt_g9(double v, char *out)
{
    if (!isfinite(v) || !(fabs(v) > 0.0))
        return slow(v, out);
    const double a = fabs(v);
    int e = (int)floor(log10(a)); /* may be off by one near powers of ten: corrected below */
    double m = 0.0;
    for (int tries = 0; tries < 2; tries++) {
        const int k = 8 - e; /* m = a x 10^k in [1e8, 1e9) */
        if (k > 22 || k < -22)
            return slow(v, out);
        m = k >= 0 ? a * pow10_exact[k] : a / pow10_exact[-k];
        if (m < 1e8)
            e--;
        else if (m >= 1e9)
            e++;
        else
            break;
    }
    if (!(m >= 1e8 && m < 1e9))
        return slow(v, out);
    const double fl = floor(m), frac = m - fl;
    if (fabs(frac - 0.5) < 1e-6 || frac < 1e-6 || frac > 1.0 - 1e-6)
        return slow(v, out); /* a tie, or an integer the scaling error could move: printf */
    unsigned long d = (unsigned long)fl + (frac > 0.5);
    if (d >= 1000000000UL) {
        d /= 10;
        e++;
    }
    char digits[10];
    for (int i = 8; i >= 0; i--) {
        digits[i] = (char)('0' + d % 10);
        d /= 10;
    }
    int nd = 9; /* significant digits left after dropping trailing zeros */
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    char *p = out;
    if (v < 0)
        *p++ = '-';
    if (e < -4 || e >= 9) {
        *p++ = digits[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        const int x = e < 0 ? -e : e;
        if (x >= 100)
            *p++ = (char)('0' + x / 100);
        *p++ = (char)('0' + x / 10 % 10);
        *p++ = (char)('0' + x % 10);
    } else if (e >= 0) {
        /* e + 1 integer digits, then the rest as the fraction */
        for (int i = 0; i <= e; i++)
            *p++ = i < nd ? digits[i] : '0';
        if (nd > e + 1) {
            *p++ = '.';
            memcpy(p, digits + e + 1, (size_t)(nd - e - 1));
            p += nd - e - 1;
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -e - 1; i++)
            *p++ = '0';
        memcpy(p, digits, (size_t)nd);
        p += nd;
    }
    *p = '\0';
    return (int)(p - out);
}

int fmt_csv(double v, char *out)
{
    const double a = fabs(v);
    if (!(a >= 1e9 && a < 9007199254740992.0) || floor(a) < a)
        return fmt_g9(v, out);
    char digits[20];
    int nd = 0;
    for (unsigned long long u = (unsigned long long)a; u; u /= 10)
        digits[nd++] = (char)('0' + u % 10);
    int n = 0;
    if (v < 0)
        out[n++] = '-';
    while (nd)
        out[n++] = digits[--nd];
    out[n] = '\0';
    return n;
}

int fmt_table(double v, int decimals, char *out)
{
    const double a = fabs(v); /* 0 and NaN fail a > 0 */
    const bool fixed = !(a > 0.0) || isinf(a) || a >= pow(10.0, 2 - decimals);
    const int n = fixed ? snprintf(out, FMT_G9_MAX, "%.*f", decimals, v)
                        : snprintf(out, FMT_G9_MAX, "%.4g", v);
    return n < FMT_G9_MAX ? n : FMT_G9_MAX - 1;
}

int fmt_size(double v, char *out)
{
    const double a = fabs(v);
    const int n = !(a > 0.0) || a >= 0.95 || isinf(a) ? snprintf(out, FMT_G9_MAX, "%.1f", v)
                                                       : snprintf(out, FMT_G9_MAX, "%.3g", v);
    return n < FMT_G9_MAX ? n : FMT_G9_MAX - 1;
}

int fmt_bytes(double bytes, char *out)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    const int last = (int)(sizeof unit / sizeof unit[0]) - 1;
    double v = bytes;
    int u = 0;
    /* 1023.95 and up of a unit prints as 1024.0: the next unit's 1.0 */
    while (u < last && fabs(v) >= (u == 0 ? 1024.0 : 1023.95)) {
        v /= 1024.0;
        u++;
    }
    const bool whole = u == 0 && !(floor(fabs(v)) < fabs(v));
    const int n = snprintf(out, FMT_G9_MAX, whole ? "%.0f %s" : "%.1f %s", v, unit[u]);
    return n < FMT_G9_MAX ? n : FMT_G9_MAX - 1;
}
