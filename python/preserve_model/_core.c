/*
 * _core.c - the C half of the Python module preserve_model, over the library's public API only
 * (include/preserve_model.h, like the CLI). It loads scenarios, returns the run report as the
 * library writes it (pm_estimate_to_json: one home for the JSON that --format json prints),
 * runs sweeps on the library's engine with the interpreter lock released, and wraps a prepared
 * step model. Library errors become preserve_model.Error with the file, JSON path, line,
 * column, status and message of the pm_error. The Python half (__init__.py) turns keyword
 * arguments into overrides and the sweep's columns into numpy arrays.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preserve_model.h"

static PyObject *Error; /* preserve_model.Error */

/* Raises Error from a library error; returns NULL for the caller to return. The library names
 * an override's origin "override KEY=VALUE" and an axis's "axis", the module's words too (the
 * tool names its options instead). */
static PyObject *raise_error(const pm_error *err)
{
    /* The whole text, however long its file path (a cut could split a UTF-8 character). */
    char small[1200];
    const size_t need = pm_error_format(err, small, sizeof small) + 1;
    char *text = need > sizeof small ? PyMem_Malloc(need) : small;
    if (!text)
        return PyErr_NoMemory();
    if (text != small)
        pm_error_format(err, text, need);
    /* "replace": a message cut by the library may end inside a UTF-8 character, and a file
     * name need not be UTF-8. */
    PyObject *e = PyObject_CallFunction(Error, "N",
                                        PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                                             "replace"));
    if (text != small)
        PyMem_Free(text);
    if (!e)
        return NULL;
    PyObject *status = PyUnicode_FromString(pm_status_name(err->status));
    PyObject *file = PyUnicode_DecodeUTF8(err->file, (Py_ssize_t)strlen(err->file), "replace");
    PyObject *path = PyUnicode_DecodeUTF8(err->path, (Py_ssize_t)strlen(err->path), "replace");
    PyObject *message =
        PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
    PyObject *line = PyLong_FromLong(err->line), *column = PyLong_FromLong(err->column);
    int rc = status && file && path && message && line && column &&
                     PyObject_SetAttrString(e, "status", status) == 0 &&
                     PyObject_SetAttrString(e, "file", file) == 0 &&
                     PyObject_SetAttrString(e, "path", path) == 0 &&
                     PyObject_SetAttrString(e, "message", message) == 0 &&
                     PyObject_SetAttrString(e, "line", line) == 0 &&
                     PyObject_SetAttrString(e, "column", column) == 0
                 ? 0
                 : -1;
    Py_XDECREF(status);
    Py_XDECREF(file);
    Py_XDECREF(path);
    Py_XDECREF(message);
    Py_XDECREF(line);
    Py_XDECREF(column);
    if (rc == 0)
        PyErr_SetObject(Error, e);
    Py_DECREF(e);
    return NULL;
}

/* A UserWarning of note (a library text, cut at its buffer: decoded with "replace"); 0, or -1
 * when the warning was made an error. */
static int warn_note(const char *note)
{
    PyObject *text = PyUnicode_DecodeUTF8(note, (Py_ssize_t)strlen(note), "replace");
    if (!text)
        return -1;
    const char *utf8 = PyUnicode_AsUTF8(text);
    const int rc = utf8 ? PyErr_WarnEx(PyExc_UserWarning, utf8, 1) : -1;
    Py_DECREF(text);
    return rc;
}

/* The strings of a sequence of str, borrowed from their objects (kept alive by *keep, a new
 * list the caller releases, with *out, by release_strings). */
typedef struct strings {
    const char **v;
    size_t n;
    PyObject *keep;
} strings;

static void release_strings(strings *s)
{
    PyMem_Free((void *)s->v);
    Py_XDECREF(s->keep);
    *s = (strings){0};
}

static int get_strings(PyObject *seq, const char *what, strings *out)
{
    *out = (strings){0};
    if (seq == Py_None)
        return 0;
    out->keep = PySequence_List(seq);
    if (!out->keep)
        return -1;
    const Py_ssize_t n = PyList_GET_SIZE(out->keep);
    out->v = PyMem_Calloc((size_t)n + 1, sizeof *out->v);
    if (!out->v) {
        release_strings(out);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(out->keep, i);
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: expected str items (got %.80s)", what,
                             Py_TYPE(item)->tp_name);
            release_strings(out);
            return -1;
        }
        out->v[i] = s;
    }
    out->n = (size_t)n;
    return 0;
}

/* Loads config with overrides (a sequence of "path=value" or None) from data_dir (NULL: the
 * library's default), and warns its warnings where warn is true (a sweep gives its own list,
 * pm_sweep_warning). Returns 0, or -1 with a Python exception set. */
static int load(const char *config, PyObject *overrides, const char *data_dir, bool warn,
                pm_scenario *s)
{
    strings ov;
    if (get_strings(overrides, "overrides", &ov) != 0)
        return -1;
    pm_load_opts o = {data_dir, ov.v, ov.n};
    pm_error err;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_scenario_load(config, &o, s, &err);
    Py_END_ALLOW_THREADS
    release_strings(&ov);
    if (st != PM_OK) {
        raise_error(&err);
        return -1;
    }
    /* The tool's warnings (pm_scenario_warning), as Python warnings (errors when warnings are
     * errors). */
    char note[512];
    for (size_t i = 0; warn && pm_scenario_warning(s, i, note, sizeof note); i++)
        if (warn_note(note) != 0) {
            pm_scenario_release(s);
            return -1;
        }
    return 0;
}

/* Keyword names for PyArg_ParseTupleAndKeywords, which takes char * (not const). */
static char k_config[] = "config", k_overrides[] = "overrides", k_data_dir[] = "data_dir",
            k_axes[] = "axes", k_threads[] = "threads", k_mode[] = "mode";
static char *load_kwlist[] = {k_config, k_overrides, k_data_dir, NULL};

static PyObject *estimate_json(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    const char *config, *data_dir = NULL;
    PyObject *overrides = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|Oz", load_kwlist, &config, &overrides,
                                     &data_dir))
        return NULL;
    pm_scenario s;
    if (load(config, overrides, data_dir, true, &s) != 0)
        return NULL;
    pm_estimate e;
    pm_error err;
    char *text = NULL;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_estimate_compute(&s, &e, &err);
    if (st == PM_OK)
        st = pm_estimate_to_json(&s, &e, &text, &err);
    Py_END_ALLOW_THREADS
    /* The estimate's own warnings (pm_estimate_warning), as the scenario's were at load. */
    char note[512];
    bool warn_failed = false;
    for (size_t i = 0; st == PM_OK && !warn_failed && pm_estimate_warning(&s, &e, i, note,
                                                                           sizeof note);
         i++)
        warn_failed = warn_note(note) != 0;
    pm_scenario_release(&s);
    if (st != PM_OK)
        return raise_error(&err);
    if (warn_failed) {
        free(text);
        return NULL;
    }
    PyObject *r = PyUnicode_FromString(text);
    free(text);
    return r;
}

/* ---------------------------------------------------------------- sweep */

/* Where the sweep callback puts the points (no Python objects: it runs without the lock, taking
 * it only to check for Ctrl-C). */
typedef struct collected {
    size_t n_axes, n_cols, width; /* width = n_axes + n_cols doubles per point */
    const pm_axis *axes;
    double *values;               /* n_points x width, row-major in grid order */
    char **errors;                /* per point: NULL, or the message of an invalid point */
    pm_sweep_tally tally;         /* the invalid and unfit points, warned once done */
    bool nomem;
    bool interrupted;             /* a signal handler raised (KeyboardInterrupt) */
} collected;

static int collect(const pm_sweep_point *pts, size_t n, void *user)
{
    collected *c = user;
    /* Ctrl-C stops the sweep: the signal is checked with the GIL, once a block. */
    PyGILState_STATE g = PyGILState_Ensure();
    c->interrupted = PyErr_CheckSignals() != 0;
    PyGILState_Release(g);
    if (c->interrupted)
        return 1;
    pm_sweep_tally_add(&c->tally, pts, n);
    for (size_t i = 0; i < n; i++) {
        const pm_sweep_point *p = &pts[i];
        double *row = c->values + p->index * c->width;
        for (size_t a = 0; a < c->n_axes; a++)
            row[a] = pm_axis_display_value(c->axes[a].kind, p->axis_value[a]);
        pm_sweep_point_values(p, row + c->n_axes, c->n_cols);
        if (p->status != PM_OK) {
            c->errors[p->index] = strdup(p->error);
            if (!c->errors[p->index]) {
                c->nomem = true;
                return 1;
            }
        }
    }
    return 0;
}

/* Whether a grid of n_points rows of width values is beyond one call (its arrays would not
 * fit; the CLI shards one: --shard K/N), the ValueError set. */
static bool grid_too_large(size_t n_points, size_t width)
{
    if (n_points <= PM_AXIS_MAX_POINTS)
        return false;
    char msg[256]; /* PyErr_Format has no %g: the message is formatted here */
    if (n_points == SIZE_MAX)
        snprintf(msg, sizeof msg, "sweep: the grid has more points than a count holds "
                                  "(over 2^64); use fewer values");
    else
        snprintf(msg, sizeof msg,
                 "sweep: the grid has %zu points, more than %d in one call (its arrays "
                 "would take %.3g GB; fewer values, or the CLI's --shard)",
                 n_points, PM_AXIS_MAX_POINTS, (double)n_points * (double)width * 8e-9);
    PyErr_SetString(PyExc_ValueError, msg);
    return true;
}

/* A sweep's answer from what collect gathered of its n_points: (column names, bytes of float64
 * rows, list of error strings ("" for valid points)); NULL with an exception set. */
static PyObject *sweep_tuple(const collected *c, size_t n_points)
{
    PyObject *names = PyTuple_New((Py_ssize_t)c->width);
    PyObject *data = PyBytes_FromStringAndSize((const char *)c->values,
                                               (Py_ssize_t)(n_points * c->width * sizeof(double)));
    PyObject *errors = PyList_New((Py_ssize_t)n_points);
    bool ok = names && data && errors;
    for (size_t i = 0; ok && i < c->width; i++) {
        PyObject *name = PyUnicode_FromString(i < c->n_axes
                                                  ? pm_axis_column(c->axes[i].kind)
                                                  : pm_sweep_column_name(i - c->n_axes));
        ok = name != NULL;
        if (ok)
            PyTuple_SET_ITEM(names, (Py_ssize_t)i, name);
    }
    for (size_t i = 0; ok && i < n_points; i++) {
        const char *m = c->errors[i] ? c->errors[i] : "";
        PyObject *text = PyUnicode_DecodeUTF8(m, (Py_ssize_t)strlen(m), "replace");
        ok = text != NULL;
        if (ok)
            PyList_SET_ITEM(errors, (Py_ssize_t)i, text);
    }
    if (ok)
        return Py_BuildValue("(NNN)", names, data, errors);
    Py_XDECREF(names);
    Py_XDECREF(data);
    Py_XDECREF(errors);
    return NULL;
}

/* sweep(config, axes, overrides=None, data_dir=None, threads=0) ->
 * (column names, bytes of float64 rows, list of error strings ("" for valid points)) */
static PyObject *sweep(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {k_config, k_axes, k_overrides, k_data_dir, k_threads, NULL};
    const char *config, *data_dir = NULL;
    PyObject *axes_obj, *overrides = Py_None;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|Ozi", kwlist, &config, &axes_obj,
                                     &overrides, &data_dir, &threads))
        return NULL;
    strings specs;
    if (get_strings(axes_obj, "axes", &specs) != 0)
        return NULL;
    if (specs.n < 1 || specs.n > PM_SWEEP_MAX_AXES) {
        const size_t got = specs.n; /* release_strings empties specs */
        release_strings(&specs);
        return PyErr_Format(PyExc_ValueError, "sweep: expected 1 to %d axes (got %zu)",
                            PM_SWEEP_MAX_AXES, got);
    }
    pm_axis axes[PM_SWEEP_MAX_AXES] = {{0}};
    pm_error err;
    PyObject *result = NULL;
    pm_scenario s;
    bool loaded = false;
    collected c = {0};
    for (size_t a = 0; a < specs.n; a++)
        if (pm_axis_parse(specs.v[a], PM_AXIS_MAX_POINTS, &axes[a], &err) != PM_OK) {
            raise_error(&err);
            goto done;
        }
    if (load(config, overrides, data_dir, false, &s) != 0) /* the sweep's list, below */
        goto done;
    loaded = true;
    /* A bare axis's default range fitted to the scenario, as the tool's. */
    for (size_t a = 0; a < specs.n; a++)
        if (pm_axis_fit_scenario(&s, &axes[a], &err) != PM_OK) {
            raise_error(&err);
            goto done;
        }
    char note[512];
    bool warn_failed = false;
    for (size_t i = 0; !warn_failed && pm_sweep_warning(&s, axes, specs.n, i, note, sizeof note);
         i++)
        warn_failed = warn_note(note) != 0;
    if (warn_failed)
        goto done;
    const size_t n_points = pm_sweep_size(axes, specs.n);
    c = (collected){.n_axes = specs.n, .n_cols = pm_sweep_column_count(), .axes = axes};
    c.width = c.n_axes + c.n_cols;
    if (grid_too_large(n_points, c.width))
        goto done;
    c.values = PyMem_RawMalloc((n_points ? n_points : 1) * c.width * sizeof *c.values);
    c.errors = PyMem_RawCalloc(n_points ? n_points : 1, sizeof *c.errors);
    if (!c.values || !c.errors) {
        PyErr_NoMemory();
        goto done;
    }
    pm_sweep_opts opts = {.threads = threads};
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_sweep_run(&s, axes, specs.n, &opts, collect, &c, &err);
    Py_END_ALLOW_THREADS
    if (c.interrupted) /* the exception PyErr_CheckSignals set */
        goto done;
    if (c.nomem) {
        PyErr_NoMemory();
        goto done;
    }
    if (st != PM_OK) {
        raise_error(&err);
        goto done;
    }
    /* What the arrays hold that a figure drawn from them does not show, as the tool says it. */
    for (size_t i = 0; !warn_failed && pm_sweep_tally_warning(&c.tally, axes, specs.n, i, note,
                                                               sizeof note);
         i++)
        warn_failed = warn_note(note) != 0;
    if (warn_failed)
        goto done;
    result = sweep_tuple(&c, n_points);
done:
    if (c.errors)
        for (size_t i = 0, n = pm_sweep_size(axes, specs.n); i < n; i++)
            free(c.errors[i]);
    PyMem_RawFree(c.errors);
    PyMem_RawFree(c.values);
    if (loaded)
        pm_scenario_release(&s);
    for (size_t a = 0; a < PM_SWEEP_MAX_AXES; a++)
        pm_axis_release(&axes[a]);
    release_strings(&specs);
    return result;
}

/* ---------------------------------------------------------------- step model */

typedef struct {
    PyObject_HEAD
    pm_step_model *model;
    int64_t max_context; /* pm_step_model_max_context, cached */
} StepModel;

static int step_init(StepModel *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {k_config, k_mode, k_overrides, k_data_dir, NULL};
    const char *config, *mode_name = "preserve", *data_dir = NULL;
    PyObject *overrides = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|sOz", kwlist, &config, &mode_name,
                                     &overrides, &data_dir))
        return -1;
    int mode = -1;
    for (int m = 0; m < PM_MODE_COUNT; m++)
        if (strcmp(mode_name, pm_mode_name((pm_mode)m)) == 0)
            mode = m;
    if (mode < 0) {
        PyErr_Format(PyExc_ValueError, "mode: expected serial, fused or preserve (got '%s')",
                     mode_name);
        return -1;
    }
    pm_scenario s;
    if (load(config, overrides, data_dir, true, &s) != 0)
        return -1;
    pm_step_model *m = NULL;
    pm_error err;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_step_model_new(&s, (pm_mode)mode, &m, &err);
    Py_END_ALLOW_THREADS
    if (st != PM_OK) {
        pm_scenario_release(&s);
        raise_error(&err);
        return -1;
    }
    /* Weights alone beyond the usable HBM: every step's time is of memory the device lacks. */
    char note[512];
    const int64_t max_context = pm_step_model_max_context(m);
    const bool warn = max_context < 0 && pm_context_warning(&s, 0, 0, note, sizeof note);
    pm_scenario_release(&s);
    if (warn && warn_note(note) != 0) {
        pm_step_model_free(m);
        return -1;
    }
    pm_step_model_free(self->model);
    self->model = m;
    self->max_context = max_context;
    return 0;
}

/* The warning of a step whose KV cache at ctx does not fit beside the weights (once per call
 * of decode_time or decode_times); 0, or -1 when the warning was made an error. */
static int warn_context(const StepModel *self, long long ctx)
{
    if (self->max_context < 0 || ctx <= self->max_context)
        return 0;
    return PyErr_WarnFormat(PyExc_UserWarning, 1,
                            "context_len %lld: the weights and KV cache exceed the usable HBM "
                            "per device beyond max_context %lld: the time is of memory the "
                            "device does not have",
                            ctx, (long long)self->max_context);
}

static void step_dealloc(StepModel *self)
{
    pm_step_model_free(self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* One step's time; *ctx_out the context read. */
static PyObject *step_time(StepModel *self, PyObject *arg, long long *ctx_out)
{
    if (!self->model)
        return PyErr_Format(PyExc_ValueError, "StepModel was not initialised");
    /* An integer of any kind (numpy's included: __index__), as fits_hbm takes it. */
    if (PyBool_Check(arg) || PyFloat_Check(arg) || !PyIndex_Check(arg))
        return PyErr_Format(PyExc_TypeError, "context_len: expected an integer (got %s)",
                            Py_TYPE(arg)->tp_name);
    PyObject *index = PyNumber_Index(arg);
    if (!index)
        return NULL;
    long long ctx = PyLong_AsLongLong(index);
    Py_DECREF(index);
    if (ctx == -1 && PyErr_Occurred())
        return NULL;
    if (ctx < 0)
        return PyErr_Format(PyExc_ValueError, "context_len: expected >= 0 (got %lld)", ctx);
    *ctx_out = ctx;
    return PyFloat_FromDouble(pm_step_model_decode_time(self->model, (int64_t)ctx));
}

static PyObject *step_decode_time(StepModel *self, PyObject *arg)
{
    long long ctx = 0;
    PyObject *t = step_time(self, arg, &ctx);
    if (t && warn_context(self, ctx) != 0)
        Py_CLEAR(t);
    return t;
}

/* decode_times(contexts) -> list of float, for a sequence of context lengths. */
static PyObject *step_decode_times(StepModel *self, PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "contexts: expected a sequence of ints");
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    long long longest = -1;
    for (Py_ssize_t i = 0; out && i < n; i++) {
        long long ctx = 0;
        PyObject *t = step_time(self, PySequence_Fast_GET_ITEM(seq, i), &ctx);
        if (!t) {
            Py_CLEAR(out);
            break;
        }
        if (ctx > longest)
            longest = ctx;
        PyList_SET_ITEM(out, i, t);
    }
    Py_DECREF(seq);
    if (out && warn_context(self, longest) != 0)
        Py_CLEAR(out);
    return out;
}

/* max_context: the longest context that fits the usable HBM (pm_step_model_max_context); -1
 * when the weights alone do not, None when every context fits. */
static PyObject *step_max_context(StepModel *self, void *closure)
{
    (void)closure;
    if (!self->model)
        return PyErr_Format(PyExc_ValueError, "StepModel was not initialised");
    const int64_t n = pm_step_model_max_context(self->model);
    if (n == INT64_MAX)
        Py_RETURN_NONE;
    return PyLong_FromLongLong((long long)n);
}

static PyGetSetDef step_getset[] = {
    {"max_context", (getter)step_max_context, NULL,
     "the longest context (cached tokens per sequence) whose weights and KV cache fit the "
     "usable HBM of the busiest device; -1 when the weights alone do not, None when every "
     "context fits (pm_step_model_max_context)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef step_methods[] = {
    {"decode_time", (PyCFunction)step_decode_time, METH_O,
     "decode_time(context_len) -> seconds of one decode step with context_len cached tokens"},
    {"decode_times", (PyCFunction)step_decode_times, METH_O,
     "decode_times(contexts) -> list of the decode_time of each context length"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject StepModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "preserve_model._core.StepModel",
    .tp_basicsize = sizeof(StepModel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "StepModel(config, mode='preserve', overrides=None, data_dir=None): one scenario "
              "and mode prepared for many decode-step times (pm_step_model_new)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)step_init,
    .tp_dealloc = (destructor)step_dealloc,
    .tp_methods = step_methods,
    .tp_getset = step_getset,
};

/* ---------------------------------------------------------------- serve */

/* A result's column names, the library's (pm_serve_column_name, pm_burst_column_name), as the
 * serve command's CSV. */
static PyObject *column_names(size_t n, const char *(*name_of)(size_t))
{
    PyObject *names = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; names && i < n; i++) {
        PyObject *name = PyUnicode_FromString(name_of(i));
        if (!name) {
            Py_DECREF(names);
            return NULL;
        }
        PyList_SET_ITEM(names, (Py_ssize_t)i, name);
    }
    return names;
}

/* (names, the rows' float64 bytes), freeing rows (count doubles); NULL with an exception set
 * when names is NULL or memory runs out. */
static PyObject *names_and_rows(PyObject *names, double *rows, size_t count)
{
    PyObject *data = names ? PyBytes_FromStringAndSize((const char *)rows,
                                                       (Py_ssize_t)(count * sizeof *rows))
                           : NULL;
    PyMem_Free(rows);
    PyObject *res = names && data ? PyTuple_Pack(2, names, data) : NULL;
    Py_XDECREF(names);
    Py_XDECREF(data);
    return res;
}

/* lengths: a sequence of (input_tokens, output_tokens, share), checked by the wrapper, into
 * w's classes; 0, or -1 with an exception set. */
static int serve_lengths(PyObject *lengths, pm_serve_workload *w)
{
    PyObject *ls = PySequence_Fast(lengths, "lengths: expected a sequence of classes");
    const Py_ssize_t k = ls ? PySequence_Fast_GET_SIZE(ls) : 0;
    if (ls && k > PM_MAX_LENGTH_CLASSES)
        PyErr_Format(PyExc_ValueError, "lengths: at most %d classes", PM_MAX_LENGTH_CLASSES);
    for (Py_ssize_t i = 0; ls && i < k && !PyErr_Occurred(); i++) {
        long long li, lo;
        double sh;
        if (PyArg_ParseTuple(PySequence_Fast_GET_ITEM(ls, i), "LLd", &li, &lo, &sh))
            w->classes[i] = (pm_length_class){li, lo, sh};
    }
    w->n_classes = (int)k;
    Py_XDECREF(ls);
    return PyErr_Occurred() ? -1 : 0;
}

/* serve(config, concurrency, chunk, rule, ttft_limit, tpot_limit, input_tokens, output_tokens,
 * overrides=None, data_dir=None, arrival=0, by_rate=False) -> (column names, bytes of float64
 * rows): the serve command's CSV. input_tokens and output_tokens 0: the scenario's prompt and
 * decode steps; by_rate: the concurrencies are request rates (an open loop). */
static PyObject *serve(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_conc[] = "concurrency", k_chunk[] = "chunk", k_rule[] = "rule",
                k_ttft[] = "ttft_limit", k_tpot[] = "tpot_limit", k_in[] = "input_tokens",
                k_out[] = "output_tokens", k_arrival[] = "arrival", k_by_rate[] = "by_rate",
                k_lengths[] = "lengths";
    static char *kwlist[] = {k_config, k_conc, k_chunk, k_rule, k_ttft, k_tpot, k_in, k_out,
                             k_overrides, k_data_dir, k_arrival, k_by_rate, k_lengths, NULL};
    const char *config, *data_dir = NULL;
    PyObject *conc_obj, *overrides = Py_None, *lengths = Py_None;
    long long chunk, in, out_tokens;
    int rule, arrival = 0, by_rate = 0;
    double ttft, tpot;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOLiddLL|OzipO", kwlist, &config,
                                     &conc_obj, &chunk, &rule, &ttft, &tpot, &in, &out_tokens,
                                     &overrides, &data_dir, &arrival, &by_rate, &lengths))
        return NULL;
    PyObject *seq = PySequence_Fast(conc_obj, "concurrency: expected a sequence of numbers");
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    double *conc = PyMem_Calloc((size_t)n + 1, sizeof *conc);
    const size_t width = pm_serve_column_count();
    double *rows = PyMem_Calloc((size_t)n * width + 1, sizeof *rows);
    if (!conc || !rows) {
        Py_DECREF(seq);
        PyMem_Free(conc);
        PyMem_Free(rows);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n && !PyErr_Occurred(); i++)
        conc[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    pm_scenario s;
    if (PyErr_Occurred() || load(config, overrides, data_dir, true, &s) != 0) {
        PyMem_Free(conc);
        PyMem_Free(rows);
        return NULL;
    }
    pm_serve_workload w = {in > 0 ? in : pm_workload_prompt_tokens(&s.workload),
                           out_tokens > 0 ? out_tokens : pm_workload_decode_steps(&s.workload),
                           1, chunk, (pm_serve_rule)rule, ttft, tpot,
                           (pm_serve_arrival)arrival, 0.0, 0, {{0}}};
    char note[256]; /* a request past the trained context (pm_serve_workload_warning) */
    if ((lengths != Py_None && serve_lengths(lengths, &w) != 0) ||
        (pm_serve_workload_warning(&s, &w, note, sizeof note) && warn_note(note) != 0)) {
        PyMem_Free(rows);
        PyMem_Free(conc);
        pm_scenario_release(&s);
        return NULL;
    }
    pm_error err;
    pm_status st = PM_OK;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && st == PM_OK; i++) {
        pm_serve_result r;
        *(by_rate ? &w.request_rate_per_s : &w.concurrency) = conc[i];
        if ((st = pm_serve_compute(&s, &w, &r, &err)) == PM_OK)
            pm_serve_point_values(by_rate ? NAN : conc[i], &r, rows + (size_t)i * width, width);
    }
    Py_END_ALLOW_THREADS
    pm_scenario_release(&s);
    PyMem_Free(conc);
    if (st != PM_OK) {
        PyMem_Free(rows);
        return raise_error(&err);
    }
    return names_and_rows(column_names(width, pm_serve_column_name), rows, (size_t)n * width);
}

/* burst(config, requests, chunk, rule, input_tokens, output_tokens, max_running,
 * overrides=None, data_dir=None) -> (column names, bytes of float64 rows): serve --burst's
 * CSV, a row per count of requests. input_tokens and output_tokens 0: the scenario's. */
static PyObject *burst(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_req[] = "requests", k_chunk[] = "chunk", k_rule[] = "rule",
                k_in[] = "input_tokens", k_out[] = "output_tokens", k_max[] = "max_running";
    static char *kwlist[] = {k_config, k_req, k_chunk, k_rule, k_in, k_out, k_max,
                             k_overrides, k_data_dir, NULL};
    const char *config, *data_dir = NULL;
    PyObject *req_obj, *overrides = Py_None;
    long long chunk, in, out_tokens;
    int rule;
    double max_running;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOLiLLd|Oz", kwlist, &config, &req_obj, &chunk,
                                     &rule, &in, &out_tokens, &max_running, &overrides,
                                     &data_dir))
        return NULL;
    PyObject *seq = PySequence_Fast(req_obj, "requests: expected a sequence of counts");
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const size_t width = pm_burst_column_count();
    double *rows = PyMem_Calloc((size_t)n * width + 1, sizeof *rows);
    long long *req = PyMem_Calloc((size_t)n + 1, sizeof *req);
    for (Py_ssize_t i = 0; rows && req && i < n && !PyErr_Occurred(); i++)
        req[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    pm_scenario s;
    if (!rows || !req || PyErr_Occurred() || load(config, overrides, data_dir, true, &s) != 0) {
        PyMem_Free(rows);
        PyMem_Free(req);
        return rows && req ? NULL : PyErr_NoMemory();
    }
    pm_burst_workload w = {0};
    w.max_running = max_running;
    w.serve = (pm_serve_workload){in > 0 ? in : pm_workload_prompt_tokens(&s.workload),
                                  out_tokens > 0 ? out_tokens
                                                 : pm_workload_decode_steps(&s.workload),
                                  1, chunk, (pm_serve_rule)rule, 0, 0, PM_SERVE_STAGGERED,
                                  0.0, 0, {{0}}};
    pm_error err;
    pm_status st = PM_OK;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && st == PM_OK; i++) {
        pm_burst_result r;
        w.requests = req[i];
        if ((st = pm_burst_compute(&s, &w, &r, &err)) == PM_OK)
            pm_burst_point_values((double)req[i], &r, rows + (size_t)i * width, width);
    }
    Py_END_ALLOW_THREADS
    pm_scenario_release(&s);
    PyMem_Free(req);
    if (st != PM_OK) {
        PyMem_Free(rows);
        return raise_error(&err);
    }
    return names_and_rows(column_names(width, pm_burst_column_name), rows, (size_t)n * width);
}

/* ---------------------------------------------------------------- search */

/* A search candidate's row, SEARCH_COLS float64: tp, pp, ep, dp, chunk, hw0, hw1 (NaN: no axis),
 * concurrency, ttft_s, tpot_s, tokens_per_s_per_user, tokens_per_s_per_device,
 * tokens_per_s_deployment, tokens_per_s_per_mm2, tokens_per_s_per_usd, tokens_per_J,
 * objective, prefill_tp, prefill_instances, decode_tp, decode_instances (all 0: co-located)
 * (the wrapper names them). */
#define SEARCH_COLS 21

static void search_row(const pm_search_spec *sp, const pm_search_candidate *k, double *v)
{
    const pm_serve_mode *x = &k->figures;
    const double row[SEARCH_COLS] = {
        k->tp, k->pp, k->ep, k->dp, (double)k->chunk,
        sp->n_hw > 0 ? pm_axis_display_value(sp->hw[0].kind, k->hw[0]) : NAN,
        sp->n_hw > 1 ? pm_axis_display_value(sp->hw[1].kind, k->hw[1]) : NAN,
        k->concurrency, x->ttft_s, x->tpot_s, x->tokens_per_s_per_user,
        x->tokens_per_s_per_device, x->tokens_per_s * k->dp, x->tokens_per_s_per_mm2,
        x->tokens_per_s_per_usd, x->tokens_per_J, k->objective, k->prefill_tp,
        k->prefill_instances, k->decode_tp, k->decode_instances};
    memcpy(v, row, sizeof row);
}

/* A sequence of at most PM_SEARCH_MAX_VALUES numbers into v; its length, or -1 with an
 * exception set. */
static int search_list(PyObject *obj, const char *what, double *v)
{
    PyObject *seq = PySequence_Fast(obj, what);
    if (!seq)
        return -1;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > PM_SEARCH_MAX_VALUES)
        PyErr_Format(PyExc_ValueError, "%s: at most %d values", what, PM_SEARCH_MAX_VALUES);
    for (Py_ssize_t i = 0; i < n && !PyErr_Occurred(); i++)
        v[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    return PyErr_Occurred() ? -1 : (int)n;
}

/* The space's lists (tp, ep and pp may be empty: the scenario's, pp None too), the hardware
 * axes' specs. */
static int search_space(pm_search_spec *sp, PyObject *tp, PyObject *ep, PyObject *pp,
                        PyObject *chunks, PyObject *conc, PyObject *hw)
{
    double v[PM_SEARCH_MAX_VALUES];
    int n;
    if ((n = search_list(tp, "tp", v)) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        sp->tp[i] = (int)v[i];
    sp->n_tp = n;
    if (pp != Py_None && (n = search_list(pp, "pp", v)) < 0)
        return -1;
    for (int i = 0; pp != Py_None && i < n; i++)
        sp->pp[i] = (int)v[i];
    sp->n_pp = pp != Py_None ? n : 0;
    if ((n = search_list(ep, "ep", v)) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        sp->ep[i] = (int)v[i];
    sp->n_ep = n;
    if ((n = search_list(chunks, "chunks", v)) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        sp->chunk[i] = (int64_t)v[i];
    sp->n_chunk = n;
    if ((sp->n_concurrency = search_list(conc, "concurrency", sp->concurrency)) < 0)
        return -1;
    strings h;
    if (get_strings(hw, "hardware", &h) != 0)
        return -1;
    pm_error err;
    for (size_t i = 0; i < h.n && i < PM_SEARCH_MAX_HW; i++) {
        if (pm_axis_parse(h.v[i], PM_AXIS_MAX_POINTS, &sp->hw[i], &err) != PM_OK) {
            release_strings(&h);
            raise_error(&err);
            return -1;
        }
        sp->n_hw = (int)i + 1;
    }
    if (h.n > PM_SEARCH_MAX_HW)
        PyErr_Format(PyExc_ValueError, "hardware: at most %d axes", PM_SEARCH_MAX_HW);
    release_strings(&h);
    return PyErr_Occurred() ? -1 : 0;
}

/* The result as (points, evaluated, pruned, not served, invalid deployments, the first one's
 * error, the hardware axes' columns, per mode (found, binds, best row bytes, front rows
 * bytes)). */
static PyObject *search_value(const pm_search_spec *sp, const pm_search_result *r)
{
    PyObject *modes = PyTuple_New(PM_MODE_COUNT);
    for (int m = 0; modes && m < PM_MODE_COUNT; m++) {
        double best[SEARCH_COLS];
        search_row(sp, &r->best[m], best);
        double *rows = PyMem_Calloc(r->n_front[m] * SEARCH_COLS + 1, sizeof *rows);
        for (size_t i = 0; rows && i < r->n_front[m]; i++)
            search_row(sp, &r->front[m][i], rows + i * SEARCH_COLS);
        PyObject *t = rows ? Py_BuildValue("(Nsy#y#)", PyBool_FromLong(r->found[m]),
                                           pm_search_bound_name(r->binds[m]),
                                           (const char *)best, (Py_ssize_t)sizeof best,
                                           (const char *)rows,
                                           (Py_ssize_t)(r->n_front[m] * SEARCH_COLS *
                                                        sizeof *rows))
                           : PyErr_NoMemory();
        PyMem_Free(rows);
        if (!t) {
            Py_DECREF(modes);
            return NULL;
        }
        PyTuple_SET_ITEM(modes, m, t);
    }
    PyObject *cols = modes ? PyTuple_New(sp->n_hw) : NULL;
    for (int a = 0; cols && a < sp->n_hw; a++)
        PyTuple_SET_ITEM(cols, a, PyUnicode_FromString(pm_axis_column(sp->hw[a].kind)));
    if (!cols) {
        Py_XDECREF(modes);
        return NULL;
    }
    return Py_BuildValue("(nnnnnsNN)", (Py_ssize_t)r->candidates, (Py_ssize_t)r->evaluated,
                         (Py_ssize_t)r->pruned, (Py_ssize_t)r->outside,
                         (Py_ssize_t)r->invalid_plans, r->first_invalid, cols, modes);
}

/* A search's limits, objective and how it runs, as search() and search_mix() take them. */
static void search_limits(pm_search_spec *sp, int budget, double ttft, double tpot, double user,
                          int objective, int exhaustive, int threads)
{
    sp->device_budget = budget;
    sp->ttft_limit_s = ttft;
    sp->tpot_limit_s = tpot;
    sp->min_tokens_per_s_per_user = user;
    sp->objective = (pm_search_objective)objective;
    sp->exhaustive = exhaustive;
    sp->threads = threads;
}

/* A member's served workload: its lengths (None: the scenario's prompt and decode steps, or
 * in and out when > 0) under rule and arrival, warned of past the trained context; 0, or -1
 * with an exception set. */
static int search_workload(const pm_scenario *s, long long in, long long out, int rule,
                           int arrival, PyObject *lengths, pm_serve_workload *w)
{
    *w = (pm_serve_workload){in > 0 ? in : pm_workload_prompt_tokens(&s->workload),
                             out > 0 ? out : pm_workload_decode_steps(&s->workload),
                             1, 1, (pm_serve_rule)rule, 0, 0, (pm_serve_arrival)arrival, 0.0, 0,
                             {{0}}};
    if (lengths != Py_None && serve_lengths(lengths, w) != 0)
        return -1;
    char note[256];
    return pm_serve_workload_warning(s, w, note, sizeof note) ? warn_note(note) : 0;
}

/* search(config, concurrency, chunks, tp, ep, hardware, budget, ttft_limit, tpot_limit,
 * min_user_rate, objective, rule, arrival, input_tokens, output_tokens, exhaustive, threads,
 * overrides=None, data_dir=None, lengths=None, shard_index=0, shard_count=0, pp=None,
 * disagg=False, link_bandwidth=0, link_latency=0, layer_streamed=True, max_load=0.9): the search
 * command's pm_search_run (of one shard of the groups when shard_count > 0; with disaggregated
 * deployments when disagg, over the link given, or the cluster's inter-node link at bandwidth
 * 0). */
static PyObject *search(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_conc[] = "concurrency", k_chunks[] = "chunks", k_tp[] = "tp", k_ep[] = "ep",
                k_hw[] = "hardware", k_budget[] = "budget", k_ttft[] = "ttft_limit",
                k_tpot[] = "tpot_limit", k_user[] = "min_user_rate", k_obj[] = "objective",
                k_rule[] = "rule", k_arrival[] = "arrival", k_in[] = "input_tokens",
                k_out[] = "output_tokens", k_ex[] = "exhaustive", k_lengths[] = "lengths",
                k_shard_index[] = "shard_index", k_shard_count[] = "shard_count", k_pp[] = "pp",
                k_disagg[] = "disagg", k_lbw[] = "link_bandwidth", k_llat[] = "link_latency",
                k_stream[] = "layer_streamed", k_load[] = "max_load";
    static char *kwlist[] = {k_config, k_conc, k_chunks, k_tp, k_ep, k_hw, k_budget, k_ttft,
                             k_tpot, k_user, k_obj, k_rule, k_arrival, k_in, k_out, k_ex,
                             k_threads, k_overrides, k_data_dir, k_lengths, k_shard_index,
                             k_shard_count, k_pp, k_disagg, k_lbw, k_llat, k_stream, k_load,
                             NULL};
    const char *config, *data_dir = NULL;
    PyObject *conc, *chunks, *tp, *ep, *hw, *overrides = Py_None, *lengths = Py_None,
             *pp = Py_None;
    int budget, objective, rule, arrival, exhaustive, threads;
    double ttft, tpot, user;
    long long in, out_tokens;
    Py_ssize_t shard_index = 0, shard_count = 0;
    int disagg = 0, streamed = 1;
    double link_bw = 0.0, link_lat = 0.0, max_load = 0.9;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOOOOOidddiiiLLpi|OzOnnOpddpd", kwlist, &config,
                                     &conc, &chunks, &tp, &ep, &hw, &budget, &ttft, &tpot, &user,
                                     &objective, &rule, &arrival, &in, &out_tokens, &exhaustive,
                                     &threads, &overrides, &data_dir, &lengths, &shard_index,
                                     &shard_count, &pp, &disagg, &link_bw, &link_lat, &streamed,
                                     &max_load))
        return NULL;
    if (shard_index < 0 || shard_count < 0)
        return PyErr_Format(PyExc_ValueError, "shard: expected counts >= 0");
    pm_search_spec *sp = PyMem_Calloc(1, sizeof *sp);
    if (!sp)
        return PyErr_NoMemory();
    pm_scenario s;
    PyObject *res = NULL;
    if (search_space(sp, tp, ep, pp, chunks, conc, hw) != 0 ||
        load(config, overrides, data_dir, true, &s) != 0)
        goto out;
    if (search_workload(&s, in, out_tokens, rule, arrival, lengths, &sp->workload) != 0) {
        pm_scenario_release(&s);
        goto out;
    }
    search_limits(sp, budget, ttft, tpot, user, objective, exhaustive, threads);
    sp->shard_index = (size_t)shard_index;
    sp->shard_count = (size_t)shard_count;
    sp->disagg = disagg;
    sp->disagg_link = (pm_disagg_link){link_bw, link_lat, streamed};
    sp->disagg_max_load_frac = max_load;
    pm_search_result r;
    pm_error err;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_search_run(&s, sp, &r, &err);
    Py_END_ALLOW_THREADS
    /* Where the answer's chip cannot be built (pm_search_warning), as UserWarnings (a shard's:
     * its slice's bests). */
    char note[512];
    bool warned = true;
    for (size_t i = 0; st == PM_OK && pm_search_warning(&s, sp, &r, i, note, sizeof note); i++)
        if (warn_note(note) != 0) {
            warned = false;
            break;
        }
    pm_scenario_release(&s);
    res = st != PM_OK ? raise_error(&err) : warned ? search_value(sp, &r) : NULL;
    if (st == PM_OK)
        pm_search_result_free(&r);
out:
    for (int a = 0; a < sp->n_hw; a++)
        pm_axis_release(&sp->hw[a]);
    PyMem_Free(sp);
    return res;
}

/* layout(prefill_instances, prefill_tp, decode_instances, decode_tp): pm_search_layout's
 * text ("colocated" when prefill_instances is 0). */
static PyObject *layout(PyObject *self, PyObject *args)
{
    (void)self;
    pm_search_candidate k;
    memset(&k, 0, sizeof k);
    if (!PyArg_ParseTuple(args, "iiii", &k.prefill_instances, &k.prefill_tp, &k.decode_instances,
                          &k.decode_tp))
        return NULL;
    char buf[96];
    pm_search_layout(&k, buf, sizeof buf);
    return PyUnicode_FromString(buf);
}

/* The mix's answer: (candidates, evaluated, pruned, invalid deployments, the hardware axes'
 * columns, the points' hardware values (n_points x n_hw float64 bytes), per mode (found, the
 * best point's index or -1, the mix objective per point, the missing member per point (0-based,
 * -1 none) as float64 bytes, the members' best rows, n_points x n_members x SEARCH_COLS)). */
static PyObject *search_mix_value(const pm_search_mix *mix, const pm_search_mix_result *r)
{
    const size_t np = r->n_points, nm = (size_t)r->n_members;
    double *hw = PyMem_Calloc(np * (size_t)mix->n_hw + 1, sizeof *hw);
    double *obj = PyMem_Calloc(np + 1, sizeof *obj), *miss = PyMem_Calloc(np + 1, sizeof *miss);
    double *rows = PyMem_Calloc(np * nm * SEARCH_COLS + 1, sizeof *rows);
    PyObject *modes = hw && obj && miss && rows ? PyTuple_New(PM_MODE_COUNT) : PyErr_NoMemory();
    for (size_t p = 0; hw && p < np; p++)
        for (int a = 0; a < mix->n_hw; a++)
            hw[p * (size_t)mix->n_hw + (size_t)a] =
                pm_axis_display_value(mix->hw[a].kind, r->points[p].hw[a]);
    for (int m = 0; modes && m < PM_MODE_COUNT; m++) {
        for (size_t p = 0; p < np; p++) {
            obj[p] = r->points[p].objective[m];
            miss[p] = r->points[p].missing[m];
            for (size_t i = 0; i < nm; i++)
                search_row(&mix->member[i].spec,
                           &r->members[(p * nm + i) * PM_MODE_COUNT + (size_t)m],
                           rows + (p * nm + i) * SEARCH_COLS);
        }
        PyObject *t = Py_BuildValue("(Nny#y#y#)", PyBool_FromLong(r->found[m]),
                                    r->found[m] ? (Py_ssize_t)r->best[m] : (Py_ssize_t)-1,
                                    (const char *)obj, (Py_ssize_t)(np * sizeof *obj),
                                    (const char *)miss, (Py_ssize_t)(np * sizeof *miss),
                                    (const char *)rows,
                                    (Py_ssize_t)(np * nm * SEARCH_COLS * sizeof *rows));
        if (!t) {
            Py_CLEAR(modes);
            break;
        }
        PyTuple_SET_ITEM(modes, m, t);
    }
    PyObject *cols = modes ? PyTuple_New(mix->n_hw) : NULL;
    for (int a = 0; cols && a < mix->n_hw; a++)
        PyTuple_SET_ITEM(cols, a, PyUnicode_FromString(pm_axis_column(mix->hw[a].kind)));
    PyObject *res = cols ? Py_BuildValue("(nnnnnNy#N)", (Py_ssize_t)r->candidates,
                                         (Py_ssize_t)r->evaluated, (Py_ssize_t)r->pruned,
                                         (Py_ssize_t)r->outside, (Py_ssize_t)r->invalid_plans,
                                         cols, (const char *)hw,
                                         (Py_ssize_t)(np * (size_t)mix->n_hw * sizeof *hw),
                                         modes)
                         : NULL;
    if (!res)
        Py_XDECREF(modes);
    PyMem_Free(hw);
    PyMem_Free(obj);
    PyMem_Free(miss);
    PyMem_Free(rows);
    return res;
}

/* Each member of configs (with shares and lengths, sequences of one length) loaded into s and
 * its spec into mix from the space base (its lists; no hardware axes); the count loaded, or -1
 * with an exception set (the loaded ones in s still to release). */
static int search_mix_members(PyObject *configs, PyObject *shares, PyObject *lengths,
                              PyObject *overrides, const char *data_dir, const pm_search_spec *base,
                              int rule, int arrival, pm_scenario *s, pm_search_mix *mix)
{
    strings c;
    if (get_strings(configs, "members", &c) != 0)
        return -1;
    double share[PM_SEARCH_MAX_MEMBERS];
    int n = (int)c.n, loaded = 0;
    if (n < 1 || n > PM_SEARCH_MAX_MEMBERS)
        PyErr_Format(PyExc_ValueError, "members: 1 to %d", PM_SEARCH_MAX_MEMBERS);
    else if (search_list(shares, "shares", share) != n || PySequence_Size(lengths) != n)
        PyErr_SetString(PyExc_ValueError, "members: a share and lengths per member");
    for (int i = 0; i < n && !PyErr_Occurred(); i++) {
        if (load(c.v[i], overrides, data_dir, true, &s[i]) != 0)
            break;
        loaded++;
        pm_search_member *mb = &mix->member[i];
        mb->scenario = &s[i];
        mb->share = share[i];
        mb->spec = *base;
        mb->spec.n_hw = 0;
        PyObject *li = PySequence_GetItem(lengths, i);
        if (!li || search_workload(&s[i], 0, 0, rule, arrival, li, &mb->spec.workload) != 0) {
            Py_XDECREF(li);
            break;
        }
        Py_DECREF(li);
    }
    release_strings(&c);
    mix->n_members = n;
    return PyErr_Occurred() ? -loaded - 1 : loaded;
}

/* search_mix(configs, shares, lengths, concurrency, chunks, tp, ep, hardware, budget,
 * ttft_limit, tpot_limit, min_user_rate, objective, rule, arrival, exhaustive, threads,
 * overrides=None, data_dir=None, pp=None, disagg=False, link_bandwidth=0, link_latency=0,
 * layer_streamed=True, max_load=0.9): the search --mix command's pm_search_mix_run (each
 * member's disaggregated deployments too when disagg, as search()'s). */
static PyObject *search_mix(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *configs, *shares, *lengths, *conc, *chunks, *tp, *ep, *hw, *overrides = Py_None,
             *pp = Py_None;
    const char *data_dir = NULL;
    int budget, objective, rule, arrival, exhaustive, threads, disagg = 0, streamed = 1;
    double ttft, tpot, user, link_bw = 0.0, link_lat = 0.0, max_load = 0.9;
    if (!PyArg_ParseTuple(args, "OOOOOOOOidddiiipi|OzOpddpd", &configs, &shares, &lengths, &conc,
                          &chunks, &tp, &ep, &hw, &budget, &ttft, &tpot, &user, &objective,
                          &rule, &arrival, &exhaustive, &threads, &overrides, &data_dir, &pp,
                          &disagg, &link_bw, &link_lat, &streamed, &max_load))
        return NULL;
    pm_search_spec *base = PyMem_Calloc(1, sizeof *base);
    pm_search_mix *mix = PyMem_Calloc(1, sizeof *mix);
    pm_scenario *s = PyMem_Calloc(PM_SEARCH_MAX_MEMBERS, sizeof *s);
    PyObject *res = NULL;
    int loaded = 0;
    if (!base || !mix || !s) {
        PyErr_NoMemory();
        goto out;
    }
    if (search_space(base, tp, ep, pp, chunks, conc, hw) != 0)
        goto out;
    search_limits(base, budget, ttft, tpot, user, objective, exhaustive, threads);
    base->disagg = disagg;
    base->disagg_link = (pm_disagg_link){link_bw, link_lat, streamed};
    base->disagg_max_load_frac = max_load;
    for (int a = 0; a < base->n_hw; a++)
        mix->hw[a] = base->hw[a];
    mix->n_hw = base->n_hw;
    mix->objective = base->objective;
    loaded = search_mix_members(configs, shares, lengths, overrides, data_dir, base, rule,
                                arrival, s, mix);
    if (loaded < 0) {
        loaded = -loaded - 1;
        goto out;
    }
    pm_search_mix_result r;
    pm_error err;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_search_mix_run(mix, &r, &err);
    Py_END_ALLOW_THREADS
    char note[512]; /* where the chip cannot be built (pm_search_mix_warning) */
    bool warned = true;
    for (size_t i = 0; st == PM_OK && pm_search_mix_warning(mix, &r, i, note, sizeof note); i++)
        if (warn_note(note) != 0) {
            warned = false;
            break;
        }
    res = st != PM_OK ? raise_error(&err) : warned ? search_mix_value(mix, &r) : NULL;
    if (st == PM_OK)
        pm_search_mix_result_free(&r);
out:
    for (int i = 0; i < loaded; i++)
        pm_scenario_release(&s[i]);
    for (int a = 0; base && a < base->n_hw; a++)
        pm_axis_release(&base->hw[a]);
    PyMem_Free(s);
    PyMem_Free(mix);
    PyMem_Free(base);
    return res;
}

/* ---------------------------------------------------------------- disagg (issue 45) */

/* The colocated columns disagg() adds: the disagg command's CSV's, named by the library. */
#define CO_WIDTH (2 * PM_MODE_COUNT * PM_DISAGG_COLOCATED_FIELDS)

/* disagg()'s column names: the library's (pm_disagg_column_name), as the disagg command's CSV,
 * then with colocated its colocated_CHIP_MODE_FIELD columns. */
static PyObject *disagg_names(bool colocated)
{
    const size_t n = pm_disagg_column_count(), width = n + (colocated ? CO_WIDTH : 0);
    PyObject *names = PyList_New((Py_ssize_t)width);
    for (size_t i = 0; names && i < width; i++) {
        char buf[128];
        const size_t k = i - n, field = k % PM_DISAGG_COLOCATED_FIELDS,
                     m = k / PM_DISAGG_COLOCATED_FIELDS % PM_MODE_COUNT,
                     chip = k / (PM_DISAGG_COLOCATED_FIELDS * PM_MODE_COUNT);
        if (i >= n)
            snprintf(buf, sizeof buf, "colocated_%s_chip_%s_%s", chip ? "decode" : "prefill",
                     pm_mode_name((pm_mode)m), pm_disagg_colocated_field_name(field));
        PyObject *name = PyUnicode_FromString(i < n ? pm_disagg_column_name(i) : buf);
        if (!name) {
            Py_DECREF(names);
            return NULL;
        }
        PyList_SET_ITEM(names, (Py_ssize_t)i, name);
    }
    return names;
}

/* The two pools' scenarios; 0, or -1 with a Python exception set (nothing left loaded). */
static int load_pools(const char *pcfg, PyObject *pov, const char *dcfg, PyObject *dov,
                      const char *data_dir, pm_scenario *ps, pm_scenario *ds)
{
    if (load(pcfg, pov, data_dir, true, ps) != 0)
        return -1;
    if (load(dcfg, dov, data_dir, true, ds) != 0) {
        pm_scenario_release(ps);
        return -1;
    }
    return 0;
}

/* (names, bytes of float64 rows) from n rows of the disagg columns (and the colocated ones). */
static PyObject *disagg_rows(const double *rows, size_t n, bool colocated)
{
    PyObject *names = disagg_names(colocated);
    const size_t width = pm_disagg_column_count() + (colocated ? CO_WIDTH : 0);
    PyObject *data = names ? PyBytes_FromStringAndSize((const char *)rows,
                                                       (Py_ssize_t)(n * width * sizeof *rows))
                           : NULL;
    PyObject *res = names && data ? PyTuple_Pack(2, names, data) : NULL;
    Py_XDECREF(names);
    Py_XDECREF(data);
    return res;
}

/* One disaggregated point into row: its columns, then the co-located deployment on each pool's
 * chip at its decode concurrency, chunk tokens a step, in every mode (NaN where none). */
static pm_status disagg_row(const pm_scenario *ps, const pm_scenario *ds,
                            const pm_disagg_workload *w, int64_t chunk, double *row,
                            pm_error *err)
{
    pm_disagg_result r;
    const pm_status st = pm_disagg_compute(ps, ds, w, &r, err);
    if (st != PM_OK)
        return st;
    const size_t n = pm_disagg_column_count();
    pm_disagg_point_values(&r, row, n);
    for (int chip = 0; chip < 2; chip++) {
        pm_serve_result co;
        const bool ok = pm_disagg_colocated(chip ? ds : ps, w, r.decode_concurrency, chunk, &co,
                                            NULL) == PM_OK;
        for (int m = 0; m < PM_MODE_COUNT; m++)
            pm_disagg_colocated_values(
                ok ? &co : NULL, (pm_mode)m,
                row + n + ((size_t)chip * PM_MODE_COUNT + (size_t)m) * PM_DISAGG_COLOCATED_FIELDS);
    }
    return PM_OK;
}

/* disagg(prefill, decode, concurrency, workload, prefill_overrides=None,
 * decode_overrides=None, data_dir=None, chunk=0) -> (names, bytes of float64 rows): one row
 * per decode concurrency (0: the HBM's most), the co-located deployments' columns after the
 * disaggregated ones (chunk: their tokens per step, 0: the library's default). workload:
 * (input_tokens, output_tokens, rate, max_instances, max_load, link_Bps, link_s, streamed,
 * prefill_instances, decode_instances, ttft_limit,
 * tpot_limit), checked by the wrapper (input and output 0, the link's NaN: the prefill
 * scenario's, pm_disagg_workload_defaults). */
static PyObject *disagg(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_p[] = "prefill", k_d[] = "decode", k_conc[] = "concurrency",
                k_w[] = "workload", k_pov[] = "prefill_overrides", k_dov[] = "decode_overrides",
                k_chunk[] = "chunk";
    static char *kwlist[] = {k_p, k_d, k_conc, k_w, k_pov, k_dov, k_data_dir, k_chunk, NULL};
    const char *pcfg, *dcfg, *data_dir = NULL;
    PyObject *conc_obj, *pov = Py_None, *dov = Py_None;
    pm_disagg_workload w = {0};
    long long in, out, chunk = 0;
    int streamed;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssO(LLdidddpiidd)|OOzL", kwlist, &pcfg, &dcfg,
                                     &conc_obj, &in, &out, &w.request_rate_per_s,
                                     &w.max_instances, &w.prefill_max_load_frac,
                                     &w.link.bandwidth_bytes_per_s, &w.link.latency_s, &streamed,
                                     &w.prefill_instances, &w.decode_instances, &w.ttft_limit_s,
                                     &w.tpot_limit_s, &pov, &dov, &data_dir, &chunk))
        return NULL;
    w.link.layer_streamed = streamed != 0;
    PyObject *seq = PySequence_Fast(conc_obj, "concurrency: expected a sequence of numbers");
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const size_t width = pm_disagg_column_count() + CO_WIDTH;
    double *conc = PyMem_Calloc((size_t)n + 1, sizeof *conc);
    double *rows = PyMem_Calloc((size_t)n * width + 1, sizeof *rows);
    for (Py_ssize_t i = 0; conc && i < n && !PyErr_Occurred(); i++)
        conc[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    pm_scenario ps, ds;
    if (!conc || !rows || PyErr_Occurred() ||
        load_pools(pcfg, pov, dcfg, dov, data_dir, &ps, &ds) != 0) {
        PyMem_Free(conc);
        PyMem_Free(rows);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    w.input_tokens = in > 0 ? in : 0;
    w.output_tokens = out > 0 ? out : 0;
    pm_disagg_workload_defaults(&ps, &w); /* the lengths at 0 and the link at NaN */
    char note[256]; /* requests past the trained context, as the CLI's warning */
    if (pm_disagg_workload_warning(&ps, &w, note, sizeof note) && warn_note(note) != 0) {
        pm_scenario_release(&ps);
        pm_scenario_release(&ds);
        PyMem_Free(conc);
        PyMem_Free(rows);
        return NULL;
    }
    pm_error err;
    pm_status st = PM_OK;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && st == PM_OK; i++) {
        w.decode_concurrency = conc[i];
        st = disagg_row(&ps, &ds, &w, (int64_t)chunk, rows + (size_t)i * width, &err);
    }
    Py_END_ALLOW_THREADS
    pm_scenario_release(&ps);
    pm_scenario_release(&ds);
    PyMem_Free(conc);
    PyObject *res = st == PM_OK ? disagg_rows(rows, (size_t)n, true) : raise_error(&err);
    PyMem_Free(rows);
    return res;
}

/* disagg_codesign(prefill, decode, pool, spec, workload, decode_concurrency,
 * prefill_overrides=None, decode_overrides=None, data_dir=None) -> (axis column, values in its
 * unit, best index, names, bytes of float64 rows; NaN rows where a point has no deployment). */
static PyObject *disagg_codesign(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_p[] = "prefill", k_d[] = "decode", k_pool[] = "pool", k_spec[] = "spec",
                k_w[] = "workload", k_c[] = "decode_concurrency",
                k_pov[] = "prefill_overrides", k_dov[] = "decode_overrides";
    static char *kwlist[] = {k_p, k_d, k_pool, k_spec, k_w, k_c, k_pov, k_dov, k_data_dir, NULL};
    const char *pcfg, *dcfg, *spec, *data_dir = NULL;
    PyObject *pov = Py_None, *dov = Py_None;
    pm_disagg_workload w = {0};
    long long in, out;
    int streamed, pool;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssis(LLdidddpiidd)d|OOz", kwlist, &pcfg, &dcfg,
                                     &pool, &spec, &in, &out, &w.request_rate_per_s,
                                     &w.max_instances, &w.prefill_max_load_frac,
                                     &w.link.bandwidth_bytes_per_s, &w.link.latency_s, &streamed,
                                     &w.prefill_instances, &w.decode_instances, &w.ttft_limit_s,
                                     &w.tpot_limit_s, &w.decode_concurrency, &pov, &dov,
                                     &data_dir))
        return NULL;
    w.link.layer_streamed = streamed != 0;
    pm_axis axis;
    pm_error err;
    if (pm_axis_parse(spec, 4096, &axis, &err) != PM_OK)
        return raise_error(&err);
    pm_scenario ps, ds;
    if (load_pools(pcfg, pov, dcfg, dov, data_dir, &ps, &ds) != 0) {
        pm_axis_release(&axis);
        return NULL;
    }
    w.input_tokens = in > 0 ? in : 0;
    w.output_tokens = out > 0 ? out : 0;
    pm_disagg_workload_defaults(&ps, &w); /* the lengths at 0 and the link at NaN */
    const size_t width = pm_disagg_column_count(), n = axis.n_values;
    pm_disagg_codesign_point *pts = PyMem_Calloc(n + 1, sizeof *pts);
    double *rows = PyMem_Calloc(n * width + 1, sizeof *rows);
    double *vals = PyMem_Calloc(n + 1, sizeof *vals);
    int best = -1;
    pm_status st = pts && rows && vals ? PM_OK : PM_ERR_NOMEM;
    if (st == PM_OK) {
        Py_BEGIN_ALLOW_THREADS
        st = pm_disagg_codesign(&ps, &ds, &w, (pm_disagg_pool)pool, axis.kind, axis.values, n,
                                pts, &best, &err);
        Py_END_ALLOW_THREADS
    }
    /* What the axis adds to the swept pool's warnings (its own were said at load): a die over
     * the reticle at some of its values; then the best's (over the reticle, or with more
     * bandwidth than the chip's, taken as free). */
    char note[512];
    bool warned = true;
    const pm_scenario *chip = pool == PM_DISAGG_PREFILL ? &ps : &ds;
    for (size_t i = 0; st == PM_OK && pm_sweep_axes_warning(chip, &axis, 1, i, note, sizeof note);
         i++)
        if (warn_note(note) != 0) {
            warned = false;
            break;
        }
    for (size_t i = 0; st == PM_OK && warned &&
                       pm_disagg_codesign_warning(chip, axis.kind, pts, n, best, i, note,
                                                  sizeof note);
         i++)
        if (warn_note(note) != 0) {
            warned = false;
            break;
        }
    for (size_t i = 0; st == PM_OK && i < n; i++) {
        vals[i] = pm_axis_display_value(axis.kind, pts[i].value);
        pm_disagg_point_values(&pts[i].result, rows + i * width, width);
        for (size_t k = 0; pts[i].status != PM_OK && k < width; k++)
            rows[i * width + k] = NAN;
    }
    PyObject *res = NULL;
    pm_scenario_release(&ps);
    pm_scenario_release(&ds);
    if (!pts || !rows || !vals) {
        res = PyErr_NoMemory();
    } else if (st != PM_OK) {
        res = raise_error(&err);
    } else if (warned) {
        PyObject *table = disagg_rows(rows, n, false);
        PyObject *v = PyBytes_FromStringAndSize((const char *)vals, (Py_ssize_t)(n * sizeof *vals));
        if (table && v)
            res = Py_BuildValue("(sOiOO)", pm_axis_column(axis.kind), v, best,
                                PyTuple_GET_ITEM(table, 0), PyTuple_GET_ITEM(table, 1));
        Py_XDECREF(table);
        Py_XDECREF(v);
    }
    pm_axis_release(&axis);
    PyMem_Free(pts);
    PyMem_Free(rows);
    PyMem_Free(vals);
    return res;
}

/* optimize(config, spec, objective, overrides=None, data_dir=None) -> (axis, column,
 * objective_column, lo, hi, evaluations, fits_hbm, ((best, objective, bracket_lo, bracket_hi,
 * iterations, at_edge, ties, fits_hbm) per mode), count): the --optimize command's search
 * (pm_optimize_spec_parse, then pm_optimize_axis_for, or pm_optimize_count for pp, dp and
 * split), its values in the column's unit; its warnings (pm_optimum_warning) as UserWarnings.
 * count is None for a continuous axis, else (tie_rel_tol, skipped, first_skipped_value,
 * first_skipped_error), the last two None when none was skipped. */
static PyObject *optimize(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_spec[] = "spec", k_objective[] = "objective";
    static char *kwlist[] = {k_config, k_spec, k_objective, k_overrides, k_data_dir, NULL};
    const char *config, *spec, *data_dir = NULL;
    PyObject *overrides = Py_None;
    int goal;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssi|Oz", kwlist, &config, &spec, &goal,
                                     &overrides, &data_dir))
        return NULL;
    if (goal < 0 || goal >= PM_OBJECTIVE_COUNT)
        return PyErr_Format(PyExc_ValueError, "objective: bad index %d", goal);
    pm_axis_kind kind;
    double lo, hi;
    pm_error err;
    if (pm_optimize_spec_parse(spec, &kind, &lo, &hi, &err) != PM_OK)
        return raise_error(&err);
    pm_scenario s;
    if (load(config, overrides, data_dir, true, &s) != 0)
        return NULL;
    pm_optimum opt;
    pm_estimate e;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    if (pm_axis_is_count(kind))
        st = pm_optimize_count(&s, kind, (pm_objective)goal, lo, hi, PM_OPTIMIZE_TIE_REL_TOL,
                               &opt, &err);
    else
        st = pm_optimize_axis_for(&s, kind, (pm_objective)goal, lo, hi,
                                  pm_optimize_grid_points(lo, hi), 1e-3, 100, &opt,
                                  &err);
    if (st == PM_OK && !opt.exhaustive)
        st = pm_estimate_compute(&s, &e, &err);
    Py_END_ALLOW_THREADS
    if (st != PM_OK) {
        pm_scenario_release(&s);
        return raise_error(&err);
    }
    char note[512];
    for (size_t i = 0; pm_optimum_warning(&s, kind, (pm_objective)goal, &opt, i, note,
                                          sizeof note);
         i++)
        if (warn_note(note) != 0) {
            pm_scenario_release(&s);
            return NULL;
        }
    pm_scenario_release(&s);
    PyObject *modes = PyTuple_New(PM_MODE_COUNT);
    for (int m = 0; modes && m < PM_MODE_COUNT; m++) {
        const char *edge = opt.at_edge[m] < 0 ? "lo" : opt.at_edge[m] > 0 ? "hi" : NULL;
        PyObject *t = Py_BuildValue(
            "(ddddiziO)", pm_axis_display_value(kind, opt.best_value[m]), opt.best_density[m],
            pm_axis_display_value(kind, opt.bracket_lo[m]),
            pm_axis_display_value(kind, opt.bracket_hi[m]), opt.iterations[m], edge,
            opt.ties[m], opt.fits_hbm[m] ? Py_True : Py_False);
        if (!t) {
            Py_DECREF(modes);
            return NULL;
        }
        PyTuple_SET_ITEM(modes, m, t);
    }
    if (!modes)
        return NULL;
    /* A count's fit is each best's (the continuous axes leave the scenario's). */
    bool fits = opt.exhaustive || e.fits_hbm;
    for (int m = 0; opt.exhaustive && m < PM_MODE_COUNT; m++)
        fits = fits && opt.fits_hbm[m];
    PyObject *count = opt.exhaustive
                          ? (opt.skipped ? Py_BuildValue("(dids)", opt.tie_rel_tol, opt.skipped,
                                                         opt.first_skipped,
                                                         opt.first_skipped_error)
                                         : Py_BuildValue("(diOO)", opt.tie_rel_tol, 0, Py_None,
                                                         Py_None))
                          : (Py_INCREF(Py_None), Py_None);
    if (!count) {
        Py_DECREF(modes);
        return NULL;
    }
    if (opt.exhaustive)
        lo = opt.lo, hi = opt.hi;
    return Py_BuildValue("(sssddiONN)", pm_axis_name(kind), pm_axis_column(kind),
                         pm_objective_column((pm_objective)goal),
                         pm_axis_display_value(kind, lo), pm_axis_display_value(kind, hi),
                         opt.evaluations, fits ? Py_True : Py_False, modes, count);
}

/* footprint(config, devices, ep, overrides=None, data_dir=None) -> (moe, rows): the footprint
 * command's rows (pm_footprint_row_compute at the whole sequence), each (devices,
 * attn_weight_bytes, kv_bytes, mlp_weight_bytes, kv_local_bytes, expert_parallel,
 * moe_weight_bytes, moe_read_bytes, experts_read_per_step, ideal_split). */
static PyObject *footprint(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_devices[] = "devices", k_ep[] = "ep";
    static char *kwlist[] = {k_config, k_devices, k_ep, k_overrides, k_data_dir, NULL};
    const char *config, *data_dir = NULL;
    PyObject *dev_obj, *overrides = Py_None;
    int ep;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOi|Oz", kwlist, &config, &dev_obj, &ep,
                                     &overrides, &data_dir))
        return NULL;
    PyObject *seq = PySequence_Fast(dev_obj, "devices: expected a sequence of counts");
    if (!seq)
        return NULL;
    pm_scenario s;
    if (load(config, overrides, data_dir, true, &s) != 0) {
        Py_DECREF(seq);
        return NULL;
    }
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *rows = PyList_New(n);
    for (Py_ssize_t i = 0; rows && i < n; i++) {
        const long d = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred())
            break;
        pm_footprint_row r;
        pm_error err;
        if (d < 1 || d > PM_MAX_DEVICES) {
            PyErr_Format(PyExc_ValueError, "devices: expected counts in [1, %d] (got %ld)",
                         PM_MAX_DEVICES, d);
            break;
        }
        if (pm_footprint_row_compute(&s, (int)d, ep, s.workload.seq_len, &r, &err) != PM_OK) {
            raise_error(&err);
            break;
        }
        PyObject *t = Py_BuildValue("(iddddidddO)", r.devices, r.attn_weight_bytes, r.kv_bytes,
                                    r.mlp_weight_bytes, r.kv_local_bytes, r.expert_parallel,
                                    r.moe_weight_bytes, r.moe_read_bytes,
                                    r.experts_read_per_step,
                                    r.ideal_split ? Py_True : Py_False);
        if (!t)
            break;
        PyList_SET_ITEM(rows, i, t);
    }
    const bool moe = s.model.experts > 0;
    pm_scenario_release(&s);
    Py_DECREF(seq);
    if (!rows || PyErr_Occurred()) {
        Py_XDECREF(rows);
        return NULL;
    }
    return Py_BuildValue("(ON)", moe ? Py_True : Py_False, rows);
}

/* ---------------------------------------------------------------- views */

/* A library text as str ("replace": a name read from a file need not be UTF-8). */
static PyObject *text_of(const char *s)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* Loads the scenario of a view (explain, timeline) with its warnings, and its context: context,
 * or the phase's default (pm_default_context) when it is -1; warns where the step's KV cache
 * outgrows the HBM, as the tool does. Returns 0, or -1 with a Python exception set. */
static int load_view(const char *config, PyObject *overrides, const char *data_dir, int phase,
                     long long context, pm_scenario *s, int64_t *ctx)
{
    if (phase != PM_PHASE_DECODE && phase != PM_PHASE_PREFILL) {
        PyErr_Format(PyExc_ValueError, "phase: expected decode (0) or prefill (1) (got %d)",
                     phase);
        return -1;
    }
    if (context < -1 || context > PM_MAX_SEQ_LEN) {
        PyErr_Format(PyExc_ValueError, "context: expected a token count in [0, %lld] (got %lld)",
                     (long long)PM_MAX_SEQ_LEN, context);
        return -1;
    }
    if (load(config, overrides, data_dir, true, s) != 0)
        return -1;
    *ctx = context >= 0 ? (int64_t)context : pm_default_context(&s->workload, (pm_phase)phase);
    char note[512];
    for (size_t i = 0; pm_context_warning(s, *ctx, i, note, sizeof note); i++)
        if (warn_note(note) != 0) {
            pm_scenario_release(s);
            return -1;
        }
    return 0;
}

/* One explain window as a tuple (collective, kind, comm_bytes, collective_s, prefetches as
 * [(consumer, what, bytes)], window_bytes, stopped_at or None, stopped_bytes or None,
 * stopped_routed, prefetch_busy_s, hidden). */
static PyObject *explain_window(const pm_explain *e, const pm_explain_window *w)
{
    const pm_graph *g = e->graph;
    PyObject *pfs = PyList_New((Py_ssize_t)w->n_prefetches);
    for (size_t k = 0; pfs && k < w->n_prefetches; k++) {
        const pm_explain_prefetch *p = &e->prefetches[w->first_prefetch + k];
        PyObject *t = Py_BuildValue("(Nsd)", text_of(g->nodes[p->consumer].name),
                                    pm_prefetch_what_name(p->what), p->bytes);
        if (!t) {
            Py_CLEAR(pfs);
            break;
        }
        PyList_SET_ITEM(pfs, (Py_ssize_t)k, t);
    }
    if (!pfs)
        return NULL;
    /* JSON's null where the window ended at the next collective */
    const bool stopped = w->stopped_at >= 0;
    PyObject *stop = stopped ? text_of(g->nodes[w->stopped_at].name) : Py_None;
    PyObject *stop_bytes = stopped ? PyFloat_FromDouble(w->stopped_bytes) : Py_None;
    if (!stopped) { /* "N" takes a reference: Py_None's too */
        Py_INCREF(Py_None);
        Py_INCREF(Py_None);
    }
    return Py_BuildValue("(NsddNdNNOdO)", text_of(g->nodes[w->collective].name),
                         pm_collective_kind_name(w->kind), w->comm_bytes, w->collective_s, pfs,
                         w->window_bytes, stop, stop_bytes,
                         w->stopped_routed ? Py_True : Py_False, w->prefetch_busy_s,
                         w->hidden ? Py_True : Py_False);
}

/* explain(config, phase, context, overrides=None, data_dir=None, stage=0) -> (scenario,
 * accelerator, context, l2_window_bytes, layers_shown, last_shown_is_layer, windows, (stage,
 * stages, first_layer, stage_layers)): the explain command's report
 * (pm_explain_compute_stage), each window as explain_window gives it. context -1: the phase's
 * default. */
static PyObject *explain(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_phase[] = "phase", k_context[] = "context", k_stage[] = "stage";
    static char *kwlist[] = {k_config, k_phase, k_context, k_overrides, k_data_dir, k_stage,
                             NULL};
    const char *config, *data_dir = NULL;
    PyObject *overrides = Py_None;
    int phase, stage = 0;
    long long context;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "siL|Ozi", kwlist, &config, &phase, &context,
                                     &overrides, &data_dir, &stage))
        return NULL;
    pm_scenario s;
    int64_t ctx;
    if (load_view(config, overrides, data_dir, phase, context, &s, &ctx) != 0)
        return NULL;
    pm_explain e;
    pm_error err;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_explain_compute_stage(&s, (pm_phase)phase, ctx, stage, &e, &err);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (st != PM_OK) {
        raise_error(&err);
        goto done;
    }
    PyObject *windows = PyList_New((Py_ssize_t)e.n_windows);
    for (size_t i = 0; windows && i < e.n_windows; i++) {
        PyObject *w = explain_window(&e, &e.windows[i]);
        if (!w) {
            Py_CLEAR(windows);
            break;
        }
        PyList_SET_ITEM(windows, (Py_ssize_t)i, w);
    }
    if (windows)
        result = Py_BuildValue("(NNLdiiN(iiii))", text_of(s.name), text_of(s.accel.name),
                               (long long)ctx, e.l2_window_bytes, e.layers_shown,
                               e.first_layer + e.stage_layers - 1, windows, e.stage, e.stages,
                               e.first_layer, e.stage_layers);
done:
    pm_explain_release(&e);
    pm_scenario_release(&s);
    return result;
}

/* One mode's timeline as a tuple (mode, layer_s, ops, layer), each op (lane_index, lane, node,
 * kind, start_s, end_s, bytes). */
static PyObject *timeline_mode(const pm_timeline *t)
{
    PyObject *ops = PyList_New((Py_ssize_t)t->n_ops);
    for (size_t k = 0; ops && k < t->n_ops; k++) {
        const pm_timeline_op *op = &t->ops[k];
        const pm_node *n = &t->graph->nodes[op->node];
        PyObject *o = Py_BuildValue("(isNsddd)", (int)op->lane, pm_lane_name(op->lane),
                                    text_of(n->name), pm_node_kind_name(n->kind), op->start_s,
                                    op->end_s, op->bytes);
        if (!o) {
            Py_CLEAR(ops);
            break;
        }
        PyList_SET_ITEM(ops, (Py_ssize_t)k, o);
    }
    return ops ? Py_BuildValue("(sdNi)", pm_mode_name(t->mode), t->layer_s, ops, t->layer)
               : NULL;
}

/* timeline(config, modes, phase, context, overrides=None, data_dir=None, stage=0) ->
 * (scenario, model, accelerator, devices, context, modes, stages): the timeline command's
 * report (pm_timeline_compute_stage) of each mode (a sequence of pm_mode values), as
 * timeline_mode gives it. context -1: the phase's default. */
static PyObject *timeline(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_modes[] = "modes", k_phase[] = "phase", k_context[] = "context",
                k_stage[] = "stage";
    static char *kwlist[] = {k_config, k_modes, k_phase, k_context, k_overrides, k_data_dir,
                             k_stage, NULL};
    const char *config, *data_dir = NULL;
    PyObject *modes_obj, *overrides = Py_None;
    int phase, stage = 0, stages = 1;
    long long context;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOiL|Ozi", kwlist, &config, &modes_obj, &phase,
                                     &context, &overrides, &data_dir, &stage))
        return NULL;
    PyObject *seq = PySequence_Fast(modes_obj, "modes: expected a sequence of modes");
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        const long m = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred() || m < 0 || m >= PM_MODE_COUNT) {
            Py_DECREF(seq);
            return PyErr_Occurred() ? NULL
                                    : PyErr_Format(PyExc_ValueError,
                                                   "modes: expected values in [0, %d) (got %ld)",
                                                   PM_MODE_COUNT, m);
        }
    }
    pm_scenario s;
    int64_t ctx;
    if (load_view(config, overrides, data_dir, phase, context, &s, &ctx) != 0) {
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *modes = PyList_New(n);
    for (Py_ssize_t i = 0; modes && i < n; i++) {
        const pm_mode m = (pm_mode)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        pm_timeline t;
        pm_error err;
        pm_status st;
        Py_BEGIN_ALLOW_THREADS
        st = pm_timeline_compute_stage(&s, m, (pm_phase)phase, ctx, stage, &t, &err);
        Py_END_ALLOW_THREADS
        stages = t.stages;
        PyObject *item = st == PM_OK ? timeline_mode(&t) : raise_error(&err);
        pm_timeline_release(&t);
        if (!item) {
            Py_CLEAR(modes);
            break;
        }
        PyList_SET_ITEM(modes, i, item);
    }
    Py_DECREF(seq);
    PyObject *result = modes ? Py_BuildValue("(NNNiLNi)", text_of(s.name), text_of(s.model.name),
                                             text_of(s.accel.name), s.cluster.devices,
                                             (long long)ctx, modes, stages)
                             : NULL;
    pm_scenario_release(&s);
    return result;
}

/* ---------------------------------------------------------------- module */

/* lengths_load(ref, data_dir=None) -> (name, [(input_tokens, output_tokens, share), ...],
 * source): a lengths file (pm_lengths_load). */
static PyObject *lengths_load(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char k_ref[] = "ref";
    static char *kwlist[] = {k_ref, k_data_dir, NULL};
    const char *ref = NULL, *dir = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z", kwlist, &ref, &dir))
        return NULL;
    const pm_load_opts opts = {dir, NULL, 0};
    pm_lengths l;
    pm_error err;
    pm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pm_lengths_load(ref, &opts, &l, &err);
    Py_END_ALLOW_THREADS
    if (st != PM_OK)
        return raise_error(&err);
    PyObject *classes = PyList_New(l.n_classes);
    for (int i = 0; classes && i < l.n_classes; i++) {
        PyObject *c = Py_BuildValue("(LLd)", (long long)l.classes[i].input_tokens,
                                    (long long)l.classes[i].output_tokens, l.classes[i].share);
        if (!c) {
            Py_DECREF(classes);
            return NULL;
        }
        PyList_SET_ITEM(classes, i, c);
    }
    if (!classes)
        return NULL;
    return Py_BuildValue("(sNs)", l.name, classes, l.source);
}

static PyObject *data_dir(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_DecodeFSDefault(pm_default_data_dir());
}

static PyObject *version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(pm_version());
}

static PyMethodDef methods[] = {
    {"estimate_json", (PyCFunction)(void (*)(void))estimate_json, METH_VARARGS | METH_KEYWORDS,
     "estimate_json(config, overrides=None, data_dir=None) -> the run report (JSON text)"},
    {"sweep", (PyCFunction)(void (*)(void))sweep, METH_VARARGS | METH_KEYWORDS,
     "sweep(config, axes, overrides=None, data_dir=None, threads=0) -> (names, float64 rows "
     "as bytes, errors)"},
    {"disagg", (PyCFunction)(void (*)(void))disagg, METH_VARARGS | METH_KEYWORDS,
     "disagg(prefill, decode, concurrency, workload, prefill_overrides=None, "
     "decode_overrides=None, data_dir=None) -> (names, float64 rows as bytes)"},
    {"disagg_codesign", (PyCFunction)(void (*)(void))disagg_codesign,
     METH_VARARGS | METH_KEYWORDS,
     "disagg_codesign(prefill, decode, pool, spec, workload, decode_concurrency, ...) -> "
     "(column, values as bytes, best, names, float64 rows as bytes)"},
    {"serve", (PyCFunction)(void (*)(void))serve, METH_VARARGS | METH_KEYWORDS,
     "serve(config, concurrency, chunk, rule, ttft_limit, tpot_limit, input_tokens, "
     "output_tokens, overrides=None, data_dir=None, arrival=0, by_rate=False) -> (names, "
     "float64 rows as bytes)"},
    {"burst", (PyCFunction)(void (*)(void))burst, METH_VARARGS | METH_KEYWORDS,
     "burst(config, requests, chunk, rule, input_tokens, output_tokens, max_running, "
     "overrides=None, data_dir=None) -> (names, float64 rows as bytes)"},
    {"search", (PyCFunction)(void (*)(void))search, METH_VARARGS | METH_KEYWORDS,
     "the search under latency limits (pm_search_run)"},
    {"layout", layout, METH_VARARGS,
     "layout(prefill_instances, prefill_tp, decode_instances, decode_tp) -> a search "
     "candidate's layout (pm_search_layout)"},
    {"search_mix", search_mix, METH_VARARGS,
     "the search over a weighted mix of models and workloads (pm_search_mix_run)"},
    {"optimize", (PyCFunction)(void (*)(void))optimize, METH_VARARGS | METH_KEYWORDS,
     "optimize(config, spec, objective, overrides=None, data_dir=None) -> (axis, column, "
     "objective_column, lo, hi, evaluations, fits_hbm, per-mode (best, objective, bracket_lo, "
     "bracket_hi, iterations, at_edge, ties, fits_hbm), count: None or (tie_rel_tol, skipped, "
     "first_skipped_value, first_skipped_error))"},
    {"footprint", (PyCFunction)(void (*)(void))footprint, METH_VARARGS | METH_KEYWORDS,
     "footprint(config, devices, ep, overrides=None, data_dir=None) -> (moe, rows)"},
    {"explain", (PyCFunction)(void (*)(void))explain, METH_VARARGS | METH_KEYWORDS,
     "explain(config, phase, context, overrides=None, data_dir=None) -> (scenario, accelerator, "
     "context, l2_window_bytes, layers_shown, last_shown_is_layer, windows)"},
    {"timeline", (PyCFunction)(void (*)(void))timeline, METH_VARARGS | METH_KEYWORDS,
     "timeline(config, modes, phase, context, overrides=None, data_dir=None) -> (scenario, "
     "model, accelerator, devices, context, [(mode, layer_s, ops)])"},
    {"lengths_load", (PyCFunction)(void (*)(void))lengths_load, METH_VARARGS | METH_KEYWORDS,
     "lengths_load(ref, data_dir=None) -> (name, [(input_tokens, output_tokens, share)], "
     "source)"},
    {"data_dir", data_dir, METH_NOARGS, "the bundled data directory the library uses"},
    {"version", version, METH_NOARGS, "the library version"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core",
                                    "The C half of preserve_model (see preserve_model).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&StepModelType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Error = PyErr_NewExceptionWithDoc(
        "preserve_model.Error",
        "A load or model error of the library: str(e) is the compiler-style message; the "
        "attributes status, file, path (JSON path), line, column and message give its parts.",
        NULL, NULL);
    if (!Error || PyModule_AddObject(m, "Error", Error) < 0) {
        Py_XDECREF(Error);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(Error); /* the module's reference was stolen; keep ours for raise_error */
    Py_INCREF(&StepModelType);
    if (PyModule_AddObject(m, "StepModel", (PyObject *)&StepModelType) < 0) {
        Py_DECREF(&StepModelType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
