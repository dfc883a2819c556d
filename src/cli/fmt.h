/*
 * fmt.h - fast "%.9g" for the tool's sweep rows (fmt.c).
 */
#ifndef PM_CLI_FMT_H
#define PM_CLI_FMT_H

/* Room for any "%.9g" output: sign, 9 digits, point, "e-308", NUL. */
#define FMT_G9_MAX 32

/* Writes v as snprintf(out, FMT_G9_MAX, "%.9g", v) would, byte for byte; returns the length. */
int fmt_g9(double v, char *out);

#endif
