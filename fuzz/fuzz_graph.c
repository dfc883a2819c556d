/*
 * fuzz_graph.c - pm_graph_from_json on arbitrary text. An accepted graph must schedule (with the
 * bundled llama70b scenario's costs) to a finite, non-negative makespan, before and after the
 * insertion pass, and must survive a round trip through pm_graph_to_json unchanged.
 */
#include "fuzz_common.h"

static void check_schedule(const pm_scenario *s, const pm_graph *g, const void *in, size_t n)
{
    pm_schedule sched;
    pm_error err;
    pm_status st = pm_schedule_compute(s, g, &sched, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, in, n);
        FZ_ASSERT(st != PM_ERR_NOMEM && st != PM_ERR_INVALID_ARG, "%s: %s", pm_status_name(st),
                  err.message);
        return;
    }
    FZ_ASSERT(fz_nonneg(sched.makespan_s), "makespan %g", sched.makespan_s);
    FZ_ASSERT(sched.n_slots == g->n_nodes, "%zu slots for %zu nodes", sched.n_slots, g->n_nodes);
    for (size_t i = 0; i < sched.n_slots; i++)
        FZ_ASSERT(fz_nonneg(sched.slots[i].start_s) && sched.slots[i].end_s >= sched.slots[i].start_s &&
                      sched.slots[i].end_s <= sched.makespan_s,
                  "slot %zu [%g, %g], makespan %g", i, sched.slots[i].start_s,
                  sched.slots[i].end_s, sched.makespan_s);
    pm_schedule_release(&sched);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const pm_scenario *base = fz_base();
    pm_graph *g = pm_graph_alloc();
    if (!g)
        abort();
    pm_error err;
    pm_status st = pm_graph_from_json((const char *)data, size, "fuzz.json", g, &err);
    if (st != PM_OK) {
        fz_check_error(st, &err, data, size);
        FZ_ASSERT(g->n_nodes == 0 && g->n_edges == 0, "a failed read left %zu nodes", g->n_nodes);
        pm_graph_free(g);
        return 0;
    }
    check_schedule(base, g, data, size);

    char *text = NULL;
    st = pm_graph_to_json(g, &text, &err);
    FZ_ASSERT(st == PM_OK, "pm_graph_to_json: %s", err.message);
    pm_graph *back = pm_graph_alloc();
    if (!back)
        abort();
    st = pm_graph_from_json(text, strlen(text), "round-trip", back, &err);
    FZ_ASSERT(st == PM_OK, "the graph's own JSON does not read back: %s: %s\n%s", err.path,
              err.message, text);
    FZ_ASSERT(back->n_nodes == g->n_nodes && back->n_edges == g->n_edges,
              "round trip changed the size");
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pm_node *a = &g->nodes[i], *b = &back->nodes[i];
        FZ_ASSERT(a->kind == b->kind && a->layer == b->layer && a->stream == b->stream &&
                      a->dtype == b->dtype && strcmp(a->name, b->name) == 0 &&
                      a->prefetch == b->prefetch && a->consumer == b->consumer &&
                      a->trigger == b->trigger && a->kv_strided == b->kv_strided &&
                      a->routed == b->routed &&
                      memcmp(&a->flop, &b->flop, sizeof a->flop) == 0 &&
                      memcmp(&a->weight_bytes, &b->weight_bytes, sizeof a->weight_bytes) == 0 &&
                      memcmp(&a->kv_bytes, &b->kv_bytes, sizeof a->kv_bytes) == 0,
                  "node %zu changed in the round trip", i);
    }
    free(text);
    pm_graph_free(back);

    pm_graph *ins = pm_graph_alloc();
    if (!ins)
        abort();
    st = pm_insert_prefetch(g, base->accel.l2_capacity_bytes * base->accel.l2_usable_frac, ins,
                            &err);
    if (st == PM_OK)
        check_schedule(base, ins, data, size);
    else
        fz_check_error(st, &err, data, size);
    pm_graph_free(ins);
    pm_graph_free(g);
    return 0;
}
