/*
 * plot.c - the one gnuplot runner of the tool (--plot of sweeps and of the timeline). gnuplot is
 * started with fork and execvp from an argument vector: no shell sees the arguments. Each
 * variable is one "-e name='value'" argument, the value a single-quoted gnuplot string (a quote
 * doubled, the only escape such strings have; they expand nothing), so a model or accelerator
 * name from a data file stays text. The scripts of plots/ only draw. gnuplot gets 300 s (a
 * script that never ends is stopped, with an error); a signal while it draws removes the
 * partial figure before the tool ends as the signal ends it.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
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

bool plot_csv_open(const char *figure, out_file *csv)
{
    char *path = str_printf("%s.csv", figure);
    if (!path) {
        out_of_memory();
        return false;
    }
    const bool ok = out_file_open(csv, path);
    free(path);
    return ok;
}

/* The path of a script of pm_default_plots_dir() (free()); NULL, said on stderr, when it cannot be read. */
static char *plot_script(const char *name)
{
    char *path = str_printf("%s/%s", pm_default_plots_dir(), name);
    struct stat st;
    if (!path)
        out_of_memory();
    else if (access(path, R_OK) != 0 || stat(path, &st) != 0) {
        fprintf(stderr, "%s: --plot: cannot read the gnuplot script %s: %s\n", prog, path,
                strerror(errno));
        free(path);
        path = NULL;
    } else if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: --plot: the gnuplot script %s is not a regular file (%s)\n", prog,
                path, S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
        free(path);
        path = NULL;
    }
    return path;
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
/* The signal that interrupted a figure (SIGINT, SIGTERM, SIGHUP), 0 while none has. */
static volatile sig_atomic_t plot_signal;

static void on_plot_signal(int sig)
{
    plot_signal = sig;
}

/* How long gnuplot may take: PLOT_TIME_LIMIT_S, or PRESERVE_MODEL_PLOT_TIMEOUT_S (seconds, > 0). */
#define PLOT_TIME_LIMIT_S 300.0
static double plot_time_limit(void)
{
    const char *env = getenv("PRESERVE_MODEL_PLOT_TIMEOUT_S");
    char *end = NULL;
    const double v = env ? strtod(env, &end) : 0.0;
    return env && end != env && *end == '\0' && v > 0 && v < 1e6 ? v : PLOT_TIME_LIMIT_S;
}

/* Waits for pid, polling every 10 ms: its wait status; PLOT_TIMED_OUT when it ran past the
 * limit, PLOT_INTERRUPTED when a signal came (it is killed and reaped either way); -1 when the
 * wait fails. */
#define PLOT_TIMED_OUT (-2)
#define PLOT_INTERRUPTED (-3)
static int wait_limited(pid_t pid)
{
    const double limit = plot_time_limit();
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (double waited = 0.0;; waited += 0.01) {
        int status;
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -1;
        if (plot_signal || waited >= limit) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return plot_signal ? PLOT_INTERRUPTED : PLOT_TIMED_OUT;
        }
        nanosleep(&tick, NULL);
    }
}

static int spawn_wait(char *const argv[])
{
    const pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* The tool ignores SIGXFSZ to report EFBIG; gnuplot gets the default, so a file-size
         * limit ends it with a signal that plot_draw names. */
        signal(SIGXFSZ, SIG_DFL);
        execvp(argv[0], argv);
        _exit(127);
    }
    return wait_limited(pid);
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

/* Whether the file ends as a complete figure of its type ends (plot_terminal's endings). */
static bool figure_complete(const char *path, const char *figure)
{
    const char *ext = strrchr(figure, '.');
    const char *tail = strcmp(ext, ".png") == 0   ? "IEND\xae\x42\x60\x82"
                       : strcmp(ext, ".svg") == 0 ? "</svg>"
                                                  : "%%EOF";
    char buf[64];
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t got = 0;
    if (fseek(f, -(long)sizeof buf, SEEK_END) != 0)
        rewind(f);
    got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const size_t m = strlen(tail);
    for (size_t i = 0; i + m <= got; i++)
        if (memcmp(buf + i, tail, m) == 0)
            return true;
    return false;
}

/* What a wait status says, in words: "exited with status N", "was not found", "was killed by
 * signal N (NAME)". */
static void say_status(int status, char *buf, size_t n)
{
    if (status == PLOT_TIMED_OUT)
        snprintf(buf, n, "did not finish within %g s and was stopped "
                         "(PRESERVE_MODEL_PLOT_TIMEOUT_S sets the limit)", plot_time_limit());
    else if (status == PLOT_INTERRUPTED)
        snprintf(buf, n, "was stopped by signal %d (%s)", (int)plot_signal,
                 strsignal((int)plot_signal));
    else if (status < 0)
        snprintf(buf, n, "could not be started: %s", strerror(errno));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(buf, n, "was not found or could not be started (exit status 127)");
    else if (WIFEXITED(status))
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "ended with wait status %d", status);
}

/* A temporary file beside figure for gnuplot to write (free()); NULL, said on stderr. */
static char *figure_tmp(const char *figure)
{
    char *tmp = str_printf("%s.tmpXXXXXX", figure);
    if (!tmp) {
        out_of_memory();
        return NULL;
    }
    const int fd = tmp_create(tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, figure, strerror(errno));
        free(tmp);
        return NULL;
    }
    close(fd);
    return tmp;
}

/* Runs gnuplot writing tmp, then checks it and renames it to figure; the exit status. */
static int draw_into(char *script, const char *tmp, const char *csv, const char *figure,
                     const char *term, const plot_var *vars, size_t n_vars)
{
    plot_var all[3 + PLOT_MAX_VARS] = {{"csv", csv, false}, {"out", tmp, false},
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
    const int status = run_gnuplot(all, 3 + n_vars, script);
    char why[160];
    if (status != 0) {
        say_status(status, why, sizeof why);
        fprintf(stderr, "%s: --plot: gnuplot %s; the CSV is in %s\n", prog, why, csv);
        return EXIT_CONFIG;
    }
    if (!figure_complete(tmp, figure)) {
        fprintf(stderr, "%s: --plot: gnuplot left %s empty or incomplete (its script drew "
                        "nothing, or a full disk or a file-size limit); the CSV is in %s\n",
                prog, figure, csv);
        return EXIT_CONFIG;
    }
    if (rename(tmp, figure) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, figure, strerror(errno));
        return EXIT_CONFIG;
    }
    fprintf(stderr, "%s: wrote %s (its data: %s)\n", prog, figure, csv);
    return 0;
}

int plot_draw(const char *script, const char *csv, const char *figure, plot_shape shape,
              const plot_var *vars, size_t n_vars)
{
    const char *term = plot_terminal(figure, shape);
    if (!term)
        return plot_usage_error(figure);
    char *path = plot_script(script);
    if (!path)
        return EXIT_CONFIG;
    char *tmp = figure_tmp(figure);
    if (!tmp) {
        free(path);
        return EXIT_CONFIG;
    }
    /* A signal while gnuplot draws stops it and removes the partial figure before the tool
     * ends as the signal would have ended it. */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction act = {0}, old[3];
    act.sa_handler = on_plot_signal;
    sigemptyset(&act.sa_mask);
    plot_signal = 0;
    for (int i = 0; i < 3; i++) {
        sigaction(sigs[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN) /* an ignored signal stays ignored (nohup, `&`) */
            sigaction(sigs[i], &act, NULL);
    }
    const int rc = draw_into(path, tmp, csv, figure, term, vars, n_vars);
    unlink(tmp); /* renamed away when it succeeded */
    free(tmp);
    free(path);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (plot_signal)
        raise((int)plot_signal);
    return rc;
}
