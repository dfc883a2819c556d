/*
 * location.c - where the bundled data and the gnuplot scripts are. One build serves two places:
 * run from the build tree (the tool, the tests, the Python module before `meson install`) it
 * reads the source tree, which is what the developer is editing; installed, it reads the copies
 * under its prefix, whatever became of the source tree. The library tells the two apart by the
 * file it was loaded from (dladdr): inside the build directory, or elsewhere. Installed, the data
 * is found relative to that file (libdir/../share/preserve-model, as meson laid it out), so an
 * installed prefix may also be moved; when that relative folder is missing (the library linked
 * statically into another program) the datadir compiled in at configure time is used.
 *
 * The environment variables PRESERVE_MODEL_DATA and PRESERVE_MODEL_PLOTS override both.
 * The answer is computed once per process (pthread_once) into static buffers that are never
 * written again: the library keeps no mutable state that a caller can observe changing.
 *
 * May call: error.c.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* Set by src/meson.build; the fallbacks keep a hand compilation working from the source root. */
#ifndef PM_SOURCE_DATA_DIR
#define PM_SOURCE_DATA_DIR "data"
#endif
#ifndef PM_SOURCE_PLOTS_DIR
#define PM_SOURCE_PLOTS_DIR "plots"
#endif
#ifndef PM_BUILD_ROOT
#define PM_BUILD_ROOT ""
#endif
#ifndef PM_INSTALL_DATA_DIR
#define PM_INSTALL_DATA_DIR "/usr/local/share/preserve-model"
#endif
#ifndef PM_LIB_TO_DATA /* the datadir relative to the libdir; "" when either is absolute */
#define PM_LIB_TO_DATA ""
#endif
#ifndef PM_SOURCE_ONLY /* -Duse_source_data=true: always the source tree */
#define PM_SOURCE_ONLY 0
#endif

static pthread_once_t located = PTHREAD_ONCE_INIT;
static char data_dir[PATH_MAX + 64];
static char plots_dir[sizeof data_dir + sizeof "/plots"]; /* data_dir + "/plots" fits */

/* An object of this library, whose address dladdr maps to the file the library came from. */
static const char anchor = 0;

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether path (resolved) lies inside the build directory this library was compiled in. */
static bool in_build_tree(const char *path)
{
    char root[PATH_MAX], file[PATH_MAX];
    if (!PM_BUILD_ROOT[0] || !realpath(PM_BUILD_ROOT, root) || !realpath(path, file))
        return false;
    const size_t n = strlen(root);
    return strncmp(file, root, n) == 0 && file[n] == '/';
}

static void locate(void)
{
    Dl_info info;
    const char *self = dladdr(&anchor, &info) && info.dli_fname && info.dli_fname[0]
                           ? info.dli_fname
                           : "/proc/self/exe"; /* linked into the main program */
    if (PM_SOURCE_ONLY || in_build_tree(self)) {
        pm_strlcpy(data_dir, PM_SOURCE_DATA_DIR, sizeof data_dir);
        pm_strlcpy(plots_dir, PM_SOURCE_PLOTS_DIR, sizeof plots_dir);
        return;
    }
    pm_strlcpy(data_dir, PM_INSTALL_DATA_DIR, sizeof data_dir);
    char file[PATH_MAX];
    if (PM_LIB_TO_DATA[0] && realpath(self, file)) {
        char *slash = strrchr(file, '/');
        if (slash) {
            char dir[sizeof data_dir];
            const int w = snprintf(dir, sizeof dir, "%.*s/%s", (int)(slash - file), file,
                                   PM_LIB_TO_DATA);
            char resolved[PATH_MAX];
            /* A cut path would be another folder: then the install prefix's data_dir stays. */
            if (w >= 0 && (size_t)w < sizeof dir && is_dir(dir) &&
                realpath(dir, resolved)) /* without the "../.." */
                pm_strlcpy(data_dir, resolved, sizeof data_dir);
        }
    }
    snprintf(plots_dir, sizeof plots_dir, "%s/plots", data_dir);
}

/* The environment's value of name when set and not empty, else the located one. */
static const char *choose(const char *name, const char *located_dir)
{
    const char *env = getenv(name);
    return env && env[0] ? env : located_dir;
}

const char *pm_default_data_dir(void)
{
    pthread_once(&located, locate);
    return choose("PRESERVE_MODEL_DATA", data_dir);
}

const char *pm_default_plots_dir(void)
{
    pthread_once(&located, locate);
    return choose("PRESERVE_MODEL_PLOTS", plots_dir);
}
