/*
 * read_components.c - the accelerator, cluster and workload readers: pm_accelerator_read
 * (with its optional area, energy, cost and gemm objects), pm_cluster_read and
 * pm_workload_read, from resolved JSON objects into the public structs. Each component alone;
 * what needs several at once is check.c's.
 *
 * May call: area.c, collective.c, die_cost.c, dtype.c, energy.c, error.c, json.c, read_fields.c,
 * schedule.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

/* An optional object of the accelerator ("area", "energy", "cost"): *present says whether it is
 * there; c is opened on it, knowing where o's keys came from. */
static pm_status open_block(pm_obj *o, const char *key, pm_obj *c, bool *present)
{
    *present = false;
    pm_status st = pm_obj_child(o, key, false, c, present);
    return st;
}

/* The area object's package: its compute dies, and the I/O dies beside (or under) them with
 * what they hold. */
static pm_status read_package(pm_obj *c, pm_area_params *a)
{
    long compute = 1, io = 0;
    int holds = PM_IO_LINKS;
    size_t n_holds;
    const char *const *holds_names = pm_io_holds_names(&n_holds);
    pm_status st;
    if ((st = pm_obj_int(c, "compute_dies", false, 1, 64, &compute)) ||
        (st = pm_obj_int(c, "io_dies", false, 0, 64, &io)))
        return st;
    a->compute_dies = (int)compute;
    a->io_dies = (int)io;
    const bool has_holds = pm_obj_has(c, "io_holds");
    const bool has_other = pm_obj_has(c, "io_other_mm2");
    const bool has_stack = pm_obj_has(c, "compute_on_io");
    if (io == 0 && (has_holds || has_other || has_stack))
        return pm_obj_fail(c, has_holds ? "io_holds" : has_other ? "io_other_mm2" : "compute_on_io",
                           PM_ERR_INCONSISTENT, "describes I/O dies, but io_dies is 0 (or absent)");
    if ((st = pm_obj_bool(c, "compute_on_io", false, &a->compute_on_io)))
        return st;
    if ((st = pm_obj_enum(c, "io_holds", io > 0, holds_names, n_holds, &holds)) ||
        (st = pm_read_quantity(c, "io_other", PM_DIM_AREA, io > 0, NONNEGATIVE,
                               &a->io_other_mm2)))
        return st;
    a->io_holds = (pm_io_holds)holds;
    return pm_obj_finish(c);
}

static pm_status read_area(pm_obj *o, pm_area_params *a)
{
    pm_obj c;
    bool present;
    pm_status st = open_block(o, "area", &c, &present);
    if (st != PM_OK || !present)
        return st;
    a->present = true;
    long stacks = 0, links = 0;
    if ((st = pm_read_quantity(&c, "process", PM_DIM_LENGTH, true, POSITIVE, &a->process_nm)) ||
        (st = pm_read_quantity(&c, "compute", PM_DIM_AREA_PER_COMPUTE, true, POSITIVE,
                              &a->compute_mm2_per_flop_per_s)) ||
        (st = pm_read_quantity(&c, "l2", PM_DIM_AREA_PER_BYTE, true, POSITIVE,
                              &a->l2_mm2_per_byte)) ||
        (st = pm_read_quantity(&c, "hbm_phy", PM_DIM_AREA_PER_ITEM, true, POSITIVE,
                              &a->hbm_phy_mm2_per_stack)) ||
        (st = pm_obj_int(&c, "hbm_stacks", true, 0, 64, &stacks)) ||
        (st = pm_read_quantity(&c, "link_phy", PM_DIM_AREA_PER_ITEM, true, POSITIVE,
                              &a->link_phy_mm2_per_link)) ||
        (st = pm_obj_int(&c, "links", true, 0, 1024, &links)) ||
        (st = pm_read_quantity(&c, "other", PM_DIM_AREA, true, NONNEGATIVE, &a->other_mm2)))
        return st;
    a->hbm_stacks = (int)stacks;
    a->links = (int)links;
    /* The L2 SRAM the die holds per byte the part enables (yield harvesting: GA100 builds 48 MiB
     * and enables 40): a ratio, so that an L2 override or sweep keeps the die's spare. */
    a->l2_die_frac = 1.0;
    if ((st = pm_read_quantity(&c, "l2_on_die", PM_DIM_FRACTION, false,
                               (pm_range){1.0, 8.0, false, false}, &a->l2_die_frac)))
        return st;
    return read_package(&c, a);
}

/* The "energy" object: energy per byte at each level, per MAC for every datatype the
 * accelerator has a peak for, and static power (fixed, and per mm2 of the modelled die). */
static pm_status read_energy(pm_obj *o, const pm_accelerator *acc, pm_energy_params *e)
{
    pm_obj c, mc;
    bool present;
    pm_status st = open_block(o, "energy", &c, &present);
    if (st != PM_OK || !present)
        return st;
    e->present = true;
    if ((st = pm_read_quantity(&c, "hbm", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                               &e->hbm_J_per_byte)) ||
        (st = pm_read_quantity(&c, "l2_write", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                               &e->l2_write_J_per_byte)) ||
        (st = pm_read_quantity(&c, "l2_read", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                               &e->l2_read_J_per_byte)) ||
        (st = pm_read_quantity(&c, "link", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                               &e->link_J_per_byte)) ||
        (st = pm_read_quantity(&c, "static", PM_DIM_POWER, false, NONNEGATIVE, &e->static_W)) ||
        (st = pm_read_quantity(&c, "leakage", PM_DIM_POWER_PER_AREA, false, NONNEGATIVE,
                               &e->leakage_W_per_mm2)) ||
        (st = pm_read_quantity(&c, "board_power", PM_DIM_POWER, false, POSITIVE, &e->board_power_W)) ||
        (st = pm_obj_child(&c, "mac", true, &mc, NULL)))
        return st;
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        e->mac_J[d] = -1.0; /* absent */
        if ((st = pm_read_quantity(&mc, pm_dtype_name((pm_dtype)d), PM_DIM_ENERGY, false, NONNEGATIVE,
                                   &e->mac_J[d])) != PM_OK)
            return st;
    }
    if ((st = pm_obj_finish(&mc)) != PM_OK)
        return st;
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        if (e->mac_J[d] < 0 && acc->peak_flop_per_s[d] > 0) {
            char key[32];
            snprintf(key, sizeof key, "%s_pJ", pm_dtype_name((pm_dtype)d));
            return pm_obj_fail(&mc, key, PM_ERR_MISSING,
                               "missing the energy of one %s MAC: every datatype of "
                               "peak_compute needs one",
                               pm_dtype_name((pm_dtype)d));
        }
        if (e->mac_J[d] < 0)
            e->mac_J[d] = 0.0;
    }
    if (!pm_energy_any(e))
        return pm_obj_fail(o, "energy", PM_ERR_RANGE,
                           "every coefficient is 0 (bytes, MACs and static power cost nothing): "
                           "give the accelerator's energies, or leave the energy object out");
    if (e->leakage_W_per_mm2 > 0 && !acc->area.present)
        return pm_obj_fail(&c, "leakage_W_per_mm2", PM_ERR_INCONSISTENT,
                           "needs the accelerator's \"area\" object (leakage scales with the "
                           "modelled die)");
    return pm_obj_finish(&c);
}

/* The "cost" object: wafer price and size, defect density and yield model, HBM and package. */
static pm_status read_cost(pm_obj *o, const pm_accelerator *acc, pm_cost_params *k)
{
    pm_obj c;
    bool present;
    pm_status st = open_block(o, "cost", &c, &present);
    if (st != PM_OK || !present)
        return st;
    k->present = true;
    int model = PM_YIELD_NEGATIVE_BINOMIAL;
    size_t n_yield = 0;
    const char *const *yield_names = pm_yield_model_names(&n_yield);
    if ((st = pm_read_quantity(&c, "wafer", PM_DIM_MONEY, true, POSITIVE, &k->wafer_usd)) ||
        (st = pm_read_quantity(&c, "wafer_diameter", PM_DIM_LENGTH_MM, true, POSITIVE,
                               &k->wafer_diameter_mm)) ||
        (st = pm_read_quantity(&c, "defect_density", PM_DIM_PER_AREA, true, NONNEGATIVE,
                               &k->defect_density_per_mm2)) ||
        (st = pm_obj_enum(&c, "yield_model", false, yield_names, n_yield, &model)) ||
        (st = pm_read_quantity(&c, "hbm", PM_DIM_MONEY_PER_BYTE, true, NONNEGATIVE,
                               &k->hbm_usd_per_byte)) ||
        (st = pm_read_quantity(&c, "package", PM_DIM_MONEY, true, NONNEGATIVE, &k->package_usd)) ||
        (st = pm_read_quantity(&c, "io_wafer", PM_DIM_MONEY, false, POSITIVE, &k->io_wafer_usd)) ||
        (st = pm_read_quantity(&c, "io_defect_density", PM_DIM_PER_AREA, false, POSITIVE,
                               &k->io_defect_density_per_mm2)))
        return st;
    if (pm_obj_has(&c, "dies_per_package"))
        return pm_obj_fail(&c, "dies_per_package", PM_ERR_UNKNOWN_KEY,
                           "the package's dies are the area's: area.compute_dies (equal dies "
                           "sharing the compute) and area.io_dies with io_holds and "
                           "io_other_mm2 (I/O dies), each die yielded alone");
    k->yield_model = (pm_yield_model)model;
    /* Read by the negative binomial only; kept (and checked) with the others, so that
     * the override accelerator.cost.yield_model=poisson works on a file that gives it. */
    const bool nb = k->yield_model == PM_YIELD_NEGATIVE_BINOMIAL;
    if ((st = pm_obj_number(&c, "yield_alpha", nb, (pm_range){0.0, 1e6, true, false},
                            &k->yield_alpha)) != PM_OK)
        return st;
    if (!acc->area.present)
        return pm_obj_fail(o, "cost", PM_ERR_INCONSISTENT,
                           "needs the accelerator's \"area\" object (the die cost follows the "
                           "modelled die area)");
    if (k->io_wafer_usd > 0 && acc->area.io_dies < 1)
        return pm_obj_fail(&c, "io_wafer_usd", PM_ERR_INCONSISTENT,
                           "the I/O dies' wafer, but the area has no I/O dies (area.io_dies)");
    if (k->io_defect_density_per_mm2 > 0 && acc->area.io_dies < 1)
        return pm_obj_fail(&c, "io_defect_density_per_cm2", PM_ERR_INCONSISTENT,
                           "the I/O dies' defect density, but the area has no I/O dies "
                           "(area.io_dies)");
    return pm_obj_finish(&c);
}

/* The optional "platform" of an accelerator or a cluster (the hardware family they belong to)
 * and, for an accelerator, the cluster it names as its own (other_key). */
static pm_status read_platform(pm_obj *o, char *platform, size_t n, const char *other_key,
                               char *other, size_t n_other)
{
    platform[0] = '\0';
    if (other)
        other[0] = '\0';
    pm_status st = pm_obj_name(o, "platform", false, platform, n);
    if (st == PM_OK && other_key)
        st = pm_obj_name(o, other_key, false, other, n_other);
    return st;
}

/* The peaks per datatype ("peak_compute", at least one) and their optional own efficiencies
 * ("compute_efficiency_by_dtype", each for a datatype with a peak). */
static pm_status read_peaks(pm_obj *o, pm_accelerator *a)
{
    pm_status st;
    pm_obj pc;
    if ((st = pm_obj_child(o, "peak_compute", true, &pc, NULL)) != PM_OK)
        return st;
    bool any = false;
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        if ((st = pm_read_quantity(&pc, pm_dtype_name((pm_dtype)d), PM_DIM_COMPUTE, false, POSITIVE,
                                  &a->peak_flop_per_s[d])) != PM_OK)
            return st;
        any = any || a->peak_flop_per_s[d] > 0;
    }
    if ((st = pm_obj_finish(&pc)) != PM_OK)
        return st;
    if (!any)
        return pm_fail(o->err, PM_ERR_MISSING, o->file, "$.peak_compute",
                       "no datatype given (expected keys like \"int8_TOPS\", \"bf16_TFLOPS\")");

    bool by_dtype = false;
    pm_obj ce;
    if ((st = pm_obj_child(o, "compute_efficiency_by_dtype", false, &ce, &by_dtype)) != PM_OK)
        return st;
    for (int d = 0; by_dtype && d < PM_DTYPE_COUNT; d++) {
        double *f = &a->compute_efficiency_dtype_frac[d];
        if ((st = pm_read_quantity(&ce, pm_dtype_name((pm_dtype)d), PM_DIM_FRACTION, false,
                                   PM_RANGE_FRACTION, f)) != PM_OK)
            return st;
        if (*f > 0 && !(a->peak_flop_per_s[d] > 0)) {
            char key[16];
            snprintf(key, sizeof key, "%s_frac", pm_dtype_name((pm_dtype)d));
            return pm_obj_fail(&ce, key, PM_ERR_INCONSISTENT,
                               "an efficiency for %s, which has no peak in peak_compute: it "
                               "would change nothing", pm_dtype_name((pm_dtype)d));
        }
    }
    if (by_dtype && (st = pm_obj_finish(&ce)) != PM_OK)
        return st;
    return PM_OK;
}

/* An accelerator file describes silicon that exists or could: a die of its package over the
 * reticle is refused. A what-if that grows it (an override, a scenario's inline accelerator
 * derived `from` a file, or a sweep point) is warned of instead (pm_scenario_warning), so that
 * a design-space sweep can say where the die stops being buildable. */
static pm_status check_buildable(pm_obj *o, const pm_accelerator *a)
{
    double per_die = 0.0;
    const char *which;
    if (!pm_die_over_reticle_named(a, &per_die, &which) || pm_obj_any_derived(o))
        return PM_OK;
    return pm_obj_fail(o, "area", PM_ERR_RANGE,
                       "the modelled %s is %.0f mm2, over the %.0f mm2 reticle (26 x 33 mm): "
                       "no such die can be built as one piece of silicon; split the package "
                       "(area.compute_dies, area.io_dies) or revisit its area coefficients",
                       which, per_die, PM_RETICLE_MM2);
}

pm_status pm_accelerator_read(pm_obj *o, pm_accelerator *a)
{
    memset(a, 0, sizeof *a);
    pm_status st;
    const char *s = NULL, *src = NULL;
    if ((st = pm_obj_string(o, "kind", false, &s)) != PM_OK)
        return st;
    if (s && strcmp(s, "accelerator") != 0)
        return pm_fail(o->err, PM_ERR_VALUE, o->file, "$.kind",
                       "expected \"accelerator\" here (got \"%s\")", s);
    if ((st = pm_obj_name(o, "name", true, a->name, sizeof a->name)) != PM_OK ||
        (st = pm_obj_string(o, "source", true, &src)) != PM_OK)
        return st;
    o->file_source = src;
    pm_obj_declare(o, "description", PM_DIM_NONE);
    if ((st = read_platform(o, a->platform, sizeof a->platform, "default_cluster",
                            a->default_cluster, sizeof a->default_cluster)) != PM_OK)
        return st;

    if ((st = read_peaks(o, a)) != PM_OK)
        return st;
    a->l2_usable_frac = 1.0;
    if ((st = pm_read_quantity(o, "compute_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                              &a->compute_efficiency_frac)) ||
        (st = pm_read_quantity(o, "hbm_capacity", PM_DIM_BYTES, true, POSITIVE,
                              &a->hbm_capacity_bytes)) ||
        (st = pm_read_quantity(o, "hbm_bandwidth", PM_DIM_BANDWIDTH, true, POSITIVE,
                              &a->hbm_bandwidth_bytes_per_s)) ||
        (st = pm_read_quantity(o, "hbm_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                              &a->hbm_efficiency_frac)) ||
        (st = pm_read_quantity(o, "kernel_hbm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &a->kernel_hbm_efficiency_frac)) ||
        (st = pm_read_quantity(o, "attention_hbm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &a->attention_hbm_efficiency_frac)) ||
        (st = pm_read_quantity(o, "attention_compute_efficiency", PM_DIM_FRACTION, false,
                              PM_RANGE_FRACTION, &a->attention_compute_efficiency_frac)) ||
        (st = pm_read_quantity(o, "attention_latency", PM_DIM_TIME, false, NONNEGATIVE,
                              &a->attention_latency_s)) ||
        (st = pm_read_quantity(o, "dequant_rate", PM_DIM_COMPUTE, false, NONNEGATIVE,
                              &a->dequant_elem_per_s)) ||
        (st = pm_read_quantity(o, "l2_capacity", PM_DIM_BYTES, true, POSITIVE,
                              &a->l2_capacity_bytes)) ||
        (st = pm_read_quantity(o, "l2_bandwidth", PM_DIM_BANDWIDTH, true, POSITIVE,
                              &a->l2_bandwidth_bytes_per_s)) ||
        (st = pm_read_quantity(o, "l2_usable", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &a->l2_usable_frac)) ||
        (st = pm_read_quantity(o, "kv_strided_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                              &a->kv_strided_efficiency_frac)) ||
        (st = pm_read_quantity(o, "kernel_launch", PM_DIM_TIME, true, NONNEGATIVE,
                              &a->kernel_launch_s)) ||
        (st = pm_read_quantity(o, "chunk_half_efficiency", PM_DIM_BYTES, true, NONNEGATIVE,
                              &a->chunk_half_efficiency_bytes)))
        return st;
    int consumer = PM_CONSUMER_WAIT;
    size_t n_consumers;
    const char *const *consumer_names = pm_prefetch_consumer_names(&n_consumers);
    if ((st = pm_obj_enum(o, "prefetch_consumer", false, consumer_names, n_consumers,
                          &consumer)) != PM_OK)
        return st;
    a->prefetch_consumer = (pm_prefetch_consumer)consumer;
    if ((st = pm_gemm_read(o, &a->gemm)) != PM_OK)
        return st;
    if ((st = read_area(o, &a->area)) != PM_OK || (st = read_energy(o, a, &a->energy)) != PM_OK ||
        (st = read_cost(o, a, &a->cost)) != PM_OK || (st = check_buildable(o, a)) != PM_OK)
        return st;
    return pm_obj_finish(o);
}

/* ---------------------------------------------------------------- cluster */

/* "pipeline_layers": the layers of each stage, a list of integers or, as `--set` writes it, a
 * string of them separated by commas ("32,31,31"). Whether they add up to the model's layers
 * is the plan's check (plan.c), which knows the model. */
static pm_status read_stage_layers(pm_obj *o, pm_cluster *c)
{
    static const char key[] = "pipeline_layers";
    pm_obj_declare(o, key, PM_DIM_NONE);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->json, key);
    if (!v)
        return PM_OK;
    int n = 0;
    if (cJSON_IsArray(v)) {
        for (const cJSON *it = v->child; it; it = it->next, n++) {
            if (n >= PM_MAX_STAGES || !cJSON_IsNumber(it) || !(it->valuedouble >= 1) ||
                !(it->valuedouble <= PM_MAX_LAYERS) ||
                fabs(it->valuedouble - floor(it->valuedouble)) > 0.0)
                return pm_obj_fail(o, key, PM_ERR_VALUE,
                                   "item %d: expected a whole number of layers in [1, %d], at "
                                   "most %d stages (got %s)",
                                   n, PM_MAX_LAYERS, PM_MAX_STAGES, pm_json_type_name(it));
            c->stage_layers[n] = (int)it->valuedouble;
        }
    } else if (cJSON_IsString(v)) {
        const char *t = v->valuestring;
        while (*t) {
            char *end = NULL;
            const long x = strtol(t, &end, 10);
            if (end == t || x < 1 || x > PM_MAX_LAYERS || n >= PM_MAX_STAGES ||
                (*end != ',' && *end != '\0'))
                return pm_obj_fail(o, key, PM_ERR_VALUE,
                                   "expected layers per stage separated by commas, each in [1, "
                                   "%d], at most %d stages (got \"%s\")",
                                   PM_MAX_LAYERS, PM_MAX_STAGES, v->valuestring);
            c->stage_layers[n++] = (int)x;
            t = *end ? end + 1 : end;
        }
    } else {
        return pm_obj_fail(o, key, PM_ERR_TYPE, "expected a list of layers per stage (got %s)",
                           pm_json_type_name(v));
    }
    if (n == 0)
        return pm_obj_fail(o, key, PM_ERR_VALUE, "lists no stage");
    return PM_OK;
}

/* The plan's stages and replicas (issue 44): pipeline_parallel, data_parallel, the layers of
 * each stage, the micro-batches in flight and the nodes the cluster has; and whether the
 * tensor-parallel group runs sequence parallel (sequence_parallel) or its attention data
 * parallel (attention_data_parallel). */
static pm_status read_stages(pm_obj *o, pm_cluster *c)
{
    long pp = 1, dp = 1, nodes = 0, mb = 0;
    pm_status st;
    if ((st = pm_obj_bool(o, "sequence_parallel", false, &c->sequence_parallel)) ||
        (st = pm_obj_bool(o, "attention_data_parallel", false, &c->attention_data_parallel)) ||
        (st = pm_obj_int(o, "pipeline_parallel", false, 1, PM_MAX_STAGES, &pp)) ||
        (st = pm_obj_int(o, "micro_batches", false, 1, PM_MAX_BATCH, &mb)) ||
        (st = pm_obj_int(o, "data_parallel", false, 1, PM_MAX_DEVICES, &dp)) ||
        (st = pm_obj_int(o, "nodes", false, 1, PM_MAX_DEVICES, &nodes)) ||
        (st = read_stage_layers(o, c)))
        return st;
    c->pipeline_parallel = (int)pp;
    c->data_parallel = (int)dp;
    c->nodes = (int)nodes;
    c->micro_batches = (int)mb;
    return PM_OK;
}

/* The cluster's kind, name, source, description and platform. */
static pm_status read_cluster_identity(pm_obj *o, pm_cluster *c)
{
    pm_status st;
    const char *s = NULL, *src = NULL;
    if ((st = pm_obj_string(o, "kind", false, &s)) != PM_OK)
        return st;
    if (s && strcmp(s, "cluster") != 0)
        return pm_fail(o->err, PM_ERR_VALUE, o->file, "$.kind",
                       "expected \"cluster\" here (got \"%s\")", s);
    if ((st = pm_obj_name(o, "name", true, c->name, sizeof c->name)) != PM_OK ||
        (st = pm_obj_string(o, "source", true, &src)) != PM_OK)
        return st;
    o->file_source = src;
    pm_obj_declare(o, "description", PM_DIM_NONE);
    return read_platform(o, c->platform, sizeof c->platform, NULL, NULL, 0);
}

/* The tensor-parallel group's devices, topology, allreduce algorithm and link. */
static pm_status read_group_link(pm_obj *o, pm_cluster *c)
{
    long devices = 0;
    int topo = 0, algo = PM_AR_AUTO;
    size_t n_topo, n_algo;
    const char *const *topo_names = pm_topology_names(&n_topo);
    const char *const *algo_names = pm_allreduce_algo_names(&n_algo);
    pm_status st;
    if ((st = pm_obj_int(o, "devices", true, 1, PM_MAX_DEVICES, &devices)) ||
        (st = pm_obj_enum(o, "topology", true, topo_names, n_topo, &topo)) ||
        (st = pm_obj_enum(o, "allreduce", false, algo_names, n_algo, &algo)) ||
        (st = pm_read_quantity(o, "link_bandwidth", PM_DIM_BANDWIDTH, true, POSITIVE,
                              &c->link_bandwidth_bytes_per_s)) ||
        (st = pm_read_quantity(o, "link_latency", PM_DIM_TIME, true, NONNEGATIVE,
                              &c->link_latency_s)) ||
        (st = pm_read_optional_quantity(o, "fused_latency", PM_DIM_TIME, NONNEGATIVE,
                                        &c->fused_latency_s, "fused_latency_us", c->link_latency_s, "s",
                                        "= link_latency_us (no separate start-up for the fused kernel)")) ||
        (st = pm_read_optional_quantity(o, "allreduce_efficiency", PM_DIM_FRACTION, PM_RANGE_FRACTION,
                                        &c->allreduce_efficiency_frac, "allreduce_efficiency_frac", 1.0,
                                        "1", "1: an allreduce's bytes move at the whole link bandwidth")))
        return st;
    c->devices = (int)devices;
    c->topology = (pm_topology)topo;
    c->algorithm = (pm_allreduce_algo)algo;
    return PM_OK;
}

/* A hierarchy's nodes: their devices, the link between them, and the intra-node links that
 * decide the intra-node phases (a ring by default); refused without "hierarchical". */
static pm_status read_nodes(pm_obj *o, pm_cluster *c)
{
    const bool hier = c->topology == PM_TOPO_HIERARCHICAL;
    long per_node = c->devices;
    pm_status st;
    if ((st = pm_obj_int(o, "devices_per_node", hier, 1, PM_MAX_DEVICES, &per_node)) ||
        (st = pm_read_quantity(o, "inter_node_bandwidth", PM_DIM_BANDWIDTH, hier, POSITIVE,
                              &c->inter_node_bandwidth_bytes_per_s)) ||
        (st = pm_read_quantity(o, "inter_node_latency", PM_DIM_TIME, hier, NONNEGATIVE,
                              &c->inter_node_latency_s)))
        return st;
    c->devices_per_node = (int)per_node;
    size_t n_topo;
    const char *const *topo_names = pm_topology_names(&n_topo);
    int intra = PM_TOPO_RING;
    if ((st = pm_obj_enum(o, "intra_node_topology", false, topo_names, n_topo, &intra)) != PM_OK)
        return st;
    if (!hier && pm_obj_has(o, "intra_node_topology"))
        return pm_obj_fail(o, "intra_node_topology", PM_ERR_INCONSISTENT,
                           "only meaningful with \"topology\": \"hierarchical\" (got topology "
                           "\"%s\")",
                           pm_topology_name(c->topology));
    if (intra == PM_TOPO_HIERARCHICAL)
        return pm_obj_fail(o, "intra_node_topology", PM_ERR_VALUE,
                           "a node's devices connect as a ring, a full_mesh or a switch (got "
                           "\"hierarchical\")");
    if (hier && !pm_obj_has(o, "intra_node_topology") &&
        (st = pm_read_note(o, "intra_node_topology", PM_TOPO_RING, "defaulted",
                           "ring: the intra-node reduce-scatter and all-gather step around a "
                           "ring")) != PM_OK)
        return st;
    c->intra_node_topology = (pm_topology)intra;
    return PM_OK;
}

/* Expert parallelism: its ranks and the all-to-all's latency and efficiency. */
static pm_status read_experts(pm_obj *o, pm_cluster *c)
{
    const bool hier = c->topology == PM_TOPO_HIERARCHICAL;
    long ep = 1;
    pm_status st;
    if ((st = pm_obj_int(o, "expert_parallel", false, 1, PM_MAX_DEVICES, &ep)) ||
        (!pm_obj_has(o, "expert_parallel") &&
         (st = pm_read_note(o, "expert_parallel", 1, "defaulted",
                            "1: the experts tensor parallel over every device"))) ||
        (st = pm_read_optional_quantity(o, "a2a_latency", PM_DIM_TIME, NONNEGATIVE, &c->a2a_latency_s,
                                        "a2a_latency_us", c->link_latency_s, "s",
                                        hier ? "= link_latency_us (inter_node_latency_us across nodes)"
                                     : "= link_latency_us")) ||
        (st = pm_read_optional_quantity(o, "a2a_efficiency", PM_DIM_FRACTION, PM_RANGE_FRACTION,
                                        &c->a2a_efficiency_frac, "a2a_efficiency_frac", 1.0, "1",
                                        "1: an all-to-all reaches the whole link bandwidth")))
        return st;
    c->expert_parallel = (int)ep;
    return PM_OK;
}

/* What must divide the devices: the expert ranks, and a hierarchy's devices per node (which
 * only a hierarchy may give). */
static pm_status check_cluster_divisors(pm_obj *o, const pm_cluster *c)
{
    const bool hier = c->topology == PM_TOPO_HIERARCHICAL;
    if (c->devices % c->expert_parallel != 0)
        return pm_obj_fail(o, "expert_parallel", PM_ERR_INCONSISTENT,
                           "must divide devices (got %d ranks, %d devices)",
                           c->expert_parallel, c->devices);
    if (hier && c->devices % c->devices_per_node != 0)
        return pm_obj_fail(o, "devices_per_node", PM_ERR_INCONSISTENT,
                       "must divide devices (got %d per node, %d devices)", c->devices_per_node,
                       c->devices);
    if (!hier && (pm_obj_has(o, "devices_per_node")))
        return pm_obj_fail(o, "devices_per_node", PM_ERR_INCONSISTENT,
                       "only meaningful with \"topology\": \"hierarchical\" (got topology \"%s\")",
                       pm_topology_name(c->topology));
    return PM_OK;
}

pm_status pm_cluster_read(pm_obj *o, pm_cluster *c)
{
    memset(c, 0, sizeof *c);
    pm_status st;
    long max_dev = 0;
    if ((st = read_cluster_identity(o, c)) || (st = read_group_link(o, c)) ||
        (st = read_nodes(o, c)) || (st = read_experts(o, c)) ||
        (st = pm_obj_int(o, "max_devices", false, 1, PM_MAX_DEVICES, &max_dev)))
        return st;
    c->max_devices = (int)max_dev;
    if ((st = read_stages(o, c)) || (st = check_cluster_divisors(o, c)))
        return st;
    return pm_obj_finish(o);
}

/* ---------------------------------------------------------------- workload */

pm_status pm_workload_read(pm_obj *o, pm_workload *w)
{
    memset(w, 0, sizeof *w);
    pm_status st;
    const char *s = NULL;
    if ((st = pm_obj_string(o, "kind", false, &s)) != PM_OK)
        return st;
    if (s && strcmp(s, "workload") != 0)
        return pm_fail(o->err, PM_ERR_VALUE, o->file, "$.kind",
                       "expected \"workload\" here (got \"%s\")", s);
    pm_obj_declare(o, "name", PM_DIM_NONE);
    pm_obj_declare(o, "description", PM_DIM_NONE);
    pm_obj_declare(o, "source", PM_DIM_NONE);
    const char *src = NULL;
    if ((st = pm_obj_string(o, "source", false, &src)) != PM_OK)
        return st;
    if (src)
        o->file_source = src;
    long batch = 0, seq = 0;
    int wd = 0, kd = 0, ad = 0, rd = -1;
    size_t n_dtypes;
    const char *const *dtype_names = pm_dtype_names(&n_dtypes);
    if ((st = pm_obj_int(o, "batch", true, 1, PM_MAX_BATCH, &batch)) ||
        (st = pm_obj_int(o, "seq_len", true, 2, PM_MAX_SEQ_LEN, &seq)) ||
        (st = pm_obj_number(o, "prefill_frac", true, (pm_range){0.0, 1.0, true, true},
                            &w->prefill_frac)) ||
        (st = pm_obj_enum(o, "weight_dtype", true, dtype_names, n_dtypes, &wd)) ||
        (st = pm_obj_enum(o, "kv_dtype", true, dtype_names, n_dtypes, &kd)) ||
        (st = pm_obj_enum(o, "act_dtype", true, dtype_names, n_dtypes, &ad)) ||
        (st = pm_obj_enum(o, "allreduce_dtype", false, dtype_names, n_dtypes, &rd)))
        return st;
    w->batch = (int)batch;
    w->seq_len = seq;
    w->weight_dtype = (pm_dtype)wd;
    w->kv_dtype = (pm_dtype)kd;
    w->act_dtype = (pm_dtype)ad;
    if ((st = pm_obj_number(o, "routing_skew_alpha", false, (pm_range){0.0, 16.0, false, false},
                            &w->routing_skew_alpha)) != PM_OK)
        return st;
    long distinct = 0;
    if ((st = pm_obj_int(o, "distinct_sequences", false, 1, PM_MAX_BATCH, &distinct)) != PM_OK)
        return st;
    w->distinct_sequences = (int)distinct;
    long group = 0;
    if ((st = pm_obj_int(o, "weight_group_size", false, 1, PM_MAX_WEIGHT_GROUP, &group)) ||
        (st = pm_obj_bool(o, "weight_zero_point", false, &w->weight_zero_point)))
        return st;
    w->weight_group_size = (int)group;
    w->allreduce_dtype_given = rd >= 0;
    if (rd >= 0)
        w->allreduce_dtype = (pm_dtype)rd;
    return pm_obj_finish(o);
}

pm_status pm_gemm_read(pm_obj *o, pm_gemm_params *g)
{
    memset(g, 0, sizeof *g);
    pm_obj c;
    bool present = false;
    pm_status st = pm_obj_child(o, "gemm", false, &c, &present);
    if (st != PM_OK || !present)
        return st;
    c.origins = o->origins;
    c.n_origins = o->n_origins;
    long units = 0, tm = 0, tn = 0;
    if ((st = pm_obj_int(&c, "compute_units", true, 1, 1000000, &units)) ||
        (st = pm_obj_int(&c, "tile_m", true, 1, 65536, &tm)) ||
        (st = pm_obj_int(&c, "tile_n", true, 1, 65536, &tn)) ||
        (st = pm_obj_quantity(&c, "overlap_loss", PM_DIM_FRACTION, true,
                              (pm_range){0.0, 1.0, false, false}, &g->overlap_loss_frac)) ||
        (st = pm_obj_quantity(&c, "latency", PM_DIM_TIME, true, (pm_range){0.0, 1.0, false, false},
                              &g->latency_s)))
        return st;
    g->compute_units = (int)units;
    g->tile_m = (int)tm;
    g->tile_n = (int)tn;
    g->present = true;
    return pm_obj_finish(&c);
}
