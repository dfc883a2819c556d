/*
 * fmt.h - fast "%.9g" for the tool's sweep rows (fmt.c).
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

#endif
