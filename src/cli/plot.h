/*
 * plot.h - figures: the one place the tool starts gnuplot (plot.c). gnuplot runs from an
 * argument vector, never through a shell, and every value reaches it as a quoted gnuplot string,
 * so no name from a data file can become a command.
 */
#ifndef PM_CLI_PLOT_H
#define PM_CLI_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The canvas of a figure: a page (sweeps), a wide strip (one timeline) or a wide page (two
 * timelines, one above the other). */
typedef enum plot_shape { PLOT_PAGE = 0, PLOT_WIDE = 1, PLOT_WIDE_TALL = 2 } plot_shape;

/* The gnuplot terminal for a figure file (.png, .svg, .pdf) of that shape, or NULL for another
 * ending or a name with a quote, backslash, $ or `. Every terminal gets the same font size
 * relative to its canvas, so labels that fit in the PNG fit in the SVG and PDF too. */
const char *plot_terminal(const char *file, plot_shape shape);

/* The usage error for a --plot FILE that plot_terminal refuses; returns EXIT_USAGE. */
int plot_usage_error(const char *file);

/* Opens FIGURE.csv, the data beside a figure, for writing; its path goes to path[n]. NULL, said
 * on stderr, when it cannot be written. */
FILE *plot_csv_open(const char *figure, char *path, size_t n);

#define PLOT_MAX_VARS 12

/* One variable of a plots/ script: a string (text, quoted for gnuplot here) or, with number, a
 * numeric literal the tool formatted itself (checked to be one). At most PLOT_MAX_VARS. */
typedef struct plot_var {
    const char *name;
    const char *value;
    bool number;
} plot_var;

/* Draws figure with the gnuplot script <script> of pm_default_plots_dir() (PRESERVE_MODEL_PLOTS
 * overrides it), setting csv, out and term, then vars. Says on stderr what it wrote, or why it could
 * not and where the CSV is. Returns 0, or EXIT_CONFIG when the script cannot be read or gnuplot
 * fails or is not installed. */
int plot_draw(const char *script, const char *csv, const char *figure, plot_shape shape,
              const plot_var *vars, size_t n_vars);

#endif
