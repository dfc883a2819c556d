/*
 * alloc.c - every allocation of the library goes through here, so that a test can make the n-th
 * allocation fail and check that each caller reports PM_ERR_NOMEM, frees what it held and leaks
 * nothing (tests/test_alloc.c). The blocks are plain malloc blocks: what the public API hands
 * out "to be freed with free()" stays so.
 *
 * The countdown and the counter are per thread (_Thread_local): the library keeps no shared
 * mutable state, and a test that injects failures on one thread cannot disturb another. With
 * injection off, an allocation costs the libc call plus one increment and one compare.
 *
 * May call: nothing of the library (the public structs only).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Allocations on this thread that will still succeed before the injected failure; negative:
 * injection off. */
static _Thread_local long successes_left = -1;
/* Whether only that one allocation fails (pm_alloc_fail_once) rather than it and all after. */
static _Thread_local bool fail_once;
/* Allocations attempted on this thread (successful or not). */
static _Thread_local long attempts;

void pm_alloc_fail_after(long n)
{
    /* The n-th allocation from now fails: n - 1 succeed first. 0 behaves like 1. */
    successes_left = n < 0 ? -1 : (n > 0 ? n - 1 : 0);
    fail_once = false;
}

void pm_alloc_fail_once(long n)
{
    pm_alloc_fail_after(n);
    fail_once = n >= 0;
}

long pm_alloc_count(void) { return attempts; }

/* Whether this allocation is to fail. */
static bool injected_failure(void)
{
    attempts++;
    if (successes_left < 0)
        return false;
    if (successes_left > 0) {
        successes_left--;
        return false;
    }
    /* This one fails; after it either every allocation fails too, until the test turns
     * injection off, or (fail once) none does. */
    if (fail_once)
        successes_left = -1;
    return true;
}

void *pm_malloc(size_t size)
{
    return injected_failure() ? NULL : malloc(size);
}

void *pm_calloc(size_t count, size_t size)
{
    return injected_failure() ? NULL : calloc(count, size);
}

void *pm_realloc(void *p, size_t size)
{
    /* Like realloc, a failure leaves p allocated and unchanged. */
    return injected_failure() ? NULL : realloc(p, size);
}

char *pm_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = pm_malloc(len);
    if (copy)
        memcpy(copy, s, len);
    return copy;
}

void pm_free(void *p) { free(p); }
