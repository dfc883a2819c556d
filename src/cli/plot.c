/*
 * plot.c - the one gnuplot runner of the tool (--plot of sweeps and of the timeline). gnuplot is
 * started with fork and execvp from an argument vector: no shell sees the arguments. Each
 * variable is one "-e name='value'" argument, the value a single-quoted gnuplot string (a quote
 * doubled, the only escape such strings have; they expand nothing), so a model or accelerator
 * name from a data file stays text. The scripts of plots/ only draw.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "plot.h"

const char *plot_terminal(const char *file, plot_shape shape)
{
    /* Names with quotes, backslashes, $ or ` were refused while the command went through a
     * shell; the message promises it, so they still are. */
    const char *ext = strrchr(file, '.');
    if (!ext || strpbrk(file, "'\"\\$`"))
        return NULL;
    /* The same font size for every terminal relative to its canvas, so labels that fit in the
     * PNG fit in the SVG and PDF: pngcairo draws a point as 4/3 pixel, the SVG's fontscale
     * does the same for its pixels, and the PDF's fontscale is its width in points over the
     * PNG's width in pixels (576/1000, 720/1200). A script's own sizes (',9') scale alike. */
    if (strcmp(ext, ".png") == 0)
        return shape == PLOT_WIDE_TALL ? "pngcairo size 1200,760 font 'Helvetica,12'"
               : shape == PLOT_WIDE    ? "pngcairo size 1200,420 font 'Helvetica,12'"
                                       : "pngcairo size 1000,800 font 'Helvetica,12'";
    if (strcmp(ext, ".svg") == 0)
        return shape == PLOT_WIDE_TALL ? "svg size 1200,760 font 'Helvetica,12' fontscale 1.333"
               : shape == PLOT_WIDE    ? "svg size 1200,420 font 'Helvetica,12' fontscale 1.333"
                                       : "svg size 1000,800 font 'Helvetica,12' fontscale 1.333";
    if (strcmp(ext, ".pdf") == 0)
        return shape == PLOT_WIDE_TALL
                   ? "pdfcairo size 10in,6.333in font 'Helvetica,12' fontscale 0.6"
               : shape == PLOT_WIDE ? "pdfcairo size 10in,3.5in font 'Helvetica,12' fontscale 0.6"
                                    : "pdfcairo size 8in,6.4in font 'Helvetica,12' fontscale 0.576";
    return NULL;
}

int plot_usage_error(const char *file)
{
    return usage_error("--plot: expected a file ending in .png, .svg or .pdf, without quotes, "
                       "backslashes, $ or ` (got '%s')",
                       file);
}

FILE *plot_csv_open(const char *figure, char *path, size_t n)
{
    snprintf(path, n, "%s.csv", figure);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
    return f;
}

/* The path of a script of plots/; false, said on stderr, when it cannot be read. */
static bool plot_script(const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", pm_default_plots_dir(), name);
    if (access(path, R_OK) == 0)
        return true;
    fprintf(stderr, "%s: --plot: cannot read the gnuplot script %s\n", prog, path);
    return false;
}

/* A complete, finite number, as strtod reads it. */
static bool is_number(const char *text)
{
    char *end;
    const double v = strtod(text, &end);
    return end != text && *end == '\0' && isfinite(v);
}

/* "name='value'" (a quote doubled) or "name=value" for a number, allocated; NULL when out of
 * memory. */
static char *assignment(const plot_var *v)
{
    size_t len = strlen(v->name) + 4;
    for (const char *q = v->value; *q; q++)
        len += *q == '\'' ? 2 : 1;
    char *a = malloc(len);
    if (!a)
        return NULL;
    char *w = a + sprintf(a, "%s=", v->name);
    if (!v->number)
        *w++ = '\'';
    for (const char *q = v->value; *q; q++) {
        if (*q == '\'' && !v->number)
            *w++ = '\'';
        *w++ = *q;
    }
    if (!v->number)
        *w++ = '\'';
    *w = '\0';
    return a;
}

/* Runs argv[0] (found on PATH) and waits. Returns the wait status as the C library's system
 * would (0: success; exit 127: it could not be started), so the message reads as it always has,
 * or -1 when no process could be made. The sweep's workers have ended by then: the child of fork
 * is a one-thread copy that only calls execvp and _exit. */
static int spawn_wait(char *const argv[])
{
    const pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}

/* Runs gnuplot with one "-e" assignment per variable, then the script; the wait status, -1 when
 * out of memory. */
static int run_gnuplot(const plot_var *vars, size_t n, char *script)
{
    static char gnuplot[] = "gnuplot", dash_e[] = "-e";
    char **argv = calloc(2 * n + 3, sizeof *argv);
    if (!argv)
        return -1;
    argv[0] = gnuplot;
    size_t made = 0;
    while (made < n && (argv[2 + 2 * made] = assignment(&vars[made])) != NULL)
        argv[1 + 2 * made++] = dash_e;
    argv[1 + 2 * made] = script;
    const int status = made == n ? spawn_wait(argv) : -1;
    for (size_t i = 0; i < made; i++)
        free(argv[2 + 2 * i]);
    free(argv);
    return status;
}

int plot_draw(const char *script, const char *csv, const char *figure, plot_shape shape,
              const plot_var *vars, size_t n_vars)
{
    const char *term = plot_terminal(figure, shape);
    if (!term)
        return plot_usage_error(figure);
    char path[1200];
    if (!plot_script(script, path, sizeof path))
        return EXIT_CONFIG;
    plot_var all[3 + PLOT_MAX_VARS] = {{"csv", csv, false}, {"out", figure, false},
                                       {"term", term, false}};
    assert(n_vars <= PLOT_MAX_VARS); /* the callers pass their fixed lists */
    for (size_t i = 0; i < n_vars; i++) {
        /* Numbers are the tool's own; one that is not a number would be gnuplot syntax. */
        if (vars[i].number && !is_number(vars[i].value)) {
            fprintf(stderr, "%s: --plot: %s is not a number (got '%s')\n", prog, vars[i].name,
                    vars[i].value);
            return EXIT_CONFIG;
        }
        all[3 + i] = vars[i];
    }
    const int status = run_gnuplot(all, 3 + n_vars, path);
    if (status != 0) {
        fprintf(stderr,
                "%s: --plot: gnuplot failed or is not installed (exit %d); the CSV is in %s\n",
                prog, status, csv);
        return EXIT_CONFIG;
    }
    fprintf(stderr, "%s: wrote %s\n", prog, figure);
    return 0;
}
