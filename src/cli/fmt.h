/*
 * fmt.h - fast "%.9g" for the tool's sweep rows, and the table's numbers and sizes (fmt.c).
 */
#ifndef PM_CLI_FMT_H
#define PM_CLI_FMT_H

/* Room for any "%.9g" output: sign, 9 digits, point, "e-308", NUL. */
#define FMT_G9_MAX 32

/* Writes v as snprintf(out, FMT_G9_MAX, "%.9g", v) would, byte for byte; returns the length. */
int fmt_g9(double v, char *out);

/* Writes v as a sweep row's number: an integral value of 10 digits or more below 2^53 (a byte
 * count) whole, so that nine digits do not round it, else as fmt_g9; returns the length (at
 * most FMT_G9_MAX - 1). */
int fmt_csv(double v, char *out);

/* Writes v for a table column of `decimals` decimals: "%.*f" where that shows at least three
 * significant digits (|v| >= 10^(2 - decimals)) or v is 0, else "%.4g", so that a small value
 * is never printed as 0.0000; returns the length (at most FMT_G9_MAX - 1). */
int fmt_table(double v, int decimals, char *out);

/* Writes a size in the table's header: "%.1f" from 1 up (and 0), "%.3g" below, so that a
 * small KV cache is never printed as 0.0 GiB; returns the length (at most FMT_G9_MAX - 1). */
int fmt_size(double v, char *out);

/* Writes a count of bytes in the unit its magnitude asks, so that a 4-byte receive is never
 * printed as 0.0 KiB: below 1 KiB whole bytes ("4 B"; "%.1f B" for a fraction of a byte, a mean
 * over routed experts), else "%.1f" in the largest of KiB, MiB, GiB and TiB (powers of 1024)
 * that the value reaches, a value that would round to 1024.0 of one unit written as 1.0 of the
 * next ("1.0 MiB", never "1024.0 KiB"); returns the length (at most FMT_G9_MAX - 1). */
int fmt_bytes(double bytes, char *out);

#endif
