/*
 * output.h - what every writer of the tool shares (output.c): growable text, the escapes that
 * keep JSON strings and CSV fields valid whatever a name holds, files written under a temporary
 * name and renamed when whole, and the final check of stdout. A write that fails is an error
 * that names the output, never a silent truncation.
 */
#ifndef PM_CLI_OUTPUT_H
#define PM_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Growable text; zero-initialise. buf is NUL-terminated once anything was appended. */
typedef struct sbuf {
    char *buf;
    size_t len, cap;
} sbuf;

/* Appends n bytes; false when out of memory (b unchanged). */
bool sbuf_append(sbuf *b, const char *src, size_t n);
/* Appends printf output; false when out of memory. */
bool sbuf_printf(sbuf *b, const char *fmt_, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string: quoted, with ", \ and every control character escaped. */
bool sbuf_json_string(sbuf *b, const char *s);
/* Appends v as a JSON number (pm_json_number: integers whole, doubles round-trip, null when
 * not finite). */
bool sbuf_json_number(sbuf *b, double v);
/* Appends s as one CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, a quote,
 * CR or LF, or always when always_quote. */
bool sbuf_csv_field(sbuf *b, const char *s, bool always_quote);
void sbuf_free(sbuf *b);

/* printf into a new string (free()); NULL when out of memory. */
char *str_printf(const char *fmt_, ...) __attribute__((format(printf, 1, 2)));

/* Writes s to f as a JSON string, or as a CSV field (sbuf_csv_field). */
void fput_json_string(FILE *f, const char *s);
void fput_csv_field(FILE *f, const char *s, bool always_quote);
/* Writes v to f as a JSON number (sbuf_json_number). */
void fput_json_number(FILE *f, double v);
/* A scenario's speculation as a JSON value: {"method", "draft_tokens", "tokens_per_step"}, or
 * null without (serve's and disagg's "speculative" key). */
void fput_json_speculation(FILE *f, const pm_speculation *sp);

/* Writes s on a '#' comment line of a CSV: a line break written as \n (and CR as \r), so no
 * name or option text can start a line of data. */
void fput_comment_text(FILE *f, const char *s);

/* mkstemp with the mode fopen gives a new file (0666 less the umask); the descriptor, or -1
 * with errno set. */
int tmp_create(char *template_);

/* An output file written as PATH.tmpXXXXXX in PATH's directory and renamed to PATH by
 * out_file_commit once every byte is written, flushed and closed: a reader never sees a partial
 * PATH. */
typedef struct out_file {
    char *path;
    char *tmp;
    FILE *f;
} out_file;

/* Creates the temporary file; false, said on stderr, when it cannot. */
bool out_file_open(out_file *o, const char *path);
/* Flushes, checks and closes the file, then renames it to its path; 0, or EXIT_CONFIG said on
 * stderr (the temporary file removed). */
int out_file_commit(out_file *o);
/* Closes and removes the temporary file (nothing when o was never opened). */
void out_file_abort(out_file *o);

/* Records that a write to stdout failed with errnum (the first one counts), for finish_output
 * to report. */
void stdout_failed(int errnum);

/* The exit status once the command returned rc: stdout flushed, checked and closed; a failed
 * write is EXIT_CONFIG with "cannot write stdout" (stderr too is flushed and checked). */
int finish_output(int rc);

#endif
