/*
 * internal.h - private helpers shared by the library's modules, grouped by the file that
 * defines them: error filling, unit conversion, JSON text, provenance, the strict JSON object
 * reader, the datatype table, the cost and collective models, the fast evaluator. Never
 * installed; the CLI cannot include it.
 */
#ifndef PM_INTERNAL_H
#define PM_INTERNAL_H

#ifdef PM_PROGRAM
#error "src/internal.h is private to the library: programs use only include/preserve_model.h"
#endif

#include <cjson/cJSON.h>
#include <stdarg.h>

#include "preserve_model.h"

#define PM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Fills err (if not NULL) and returns status. file and path may be NULL. */
pm_status pm_fail(pm_error *err, pm_status status, const char *file, const char *path,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The text of an errno value, into buf (thread-safe strerror). Returns buf. */
const char *pm_errno_text(int errnum, char *buf, size_t n);
/* Clears err to PM_OK. */
void pm_error_clear(pm_error *err);
/* Whether file (NULL: no) names an override as the origin of a value or an error:
 * PM_ERROR_FILE_OVERRIDE alone or followed by " KEY=VALUE". */
bool pm_file_is_override(const char *file);

/* Copies src into dst of size n, always NUL-terminated, truncating at a UTF-8 character
 * boundary (a multibyte character is dropped whole rather than split). */
void pm_strlcpy(char *dst, const char *src, size_t n);
/* Levenshtein distance, capped at 255; for "did you mean". */
int pm_edit_distance(const char *a, const char *b);
/* The most edits a "did you mean" accepts for a word of len bytes: 2, or a third of the length
 * beyond 9 (the one rule of pm_suggest and of the unknown JSON keys). */
int pm_suggest_limit(size_t len);

/* Splits a key "base_UNIT" at the longest known unit suffix. Returns false when the key has no
 * unit suffix. base receives the part before the unit (NUL-terminated, at most n bytes). */
bool pm_unit_split_key(const char *key, char *base, size_t n, const char **unit);
/* The magnitudes the model is defined for, per dimension, in SI (units.c): [lo, hi] into *lo,
 * *hi, or false for a dimension without (fractions and counts have their own ranges). */
bool pm_magnitude_range(pm_dimension dim, double *lo, double *hi);
/* Whether x is 0 or within the model's magnitudes for dim (finite without any). NaN fails. */
bool pm_magnitude_ok(double x, pm_dimension dim);
/* Names of the units accepted for a dimension, comma separated, for messages. */
const char *pm_unit_names(pm_dimension dim);
const char *pm_unit_si_name(pm_dimension dim);

/* ---- files and JSON text (json_syntax.c) ---- */

/* Reads a whole file into a new NUL-terminated buffer (free()). */
pm_status pm_read_file(const char *path, char **text, size_t *len, pm_error *err);
/* Parses text strictly: syntax errors with line:column, duplicate keys, non-finite numbers. */
pm_status pm_json_parse(const char *text, size_t len, const char *file, cJSON **out,
                        pm_error *err);
/* Reads and parses a file. */
pm_status pm_json_load_file(const char *path, cJSON **out, pm_error *err);

/* ---- provenance (provenance.c) ---- */

struct pm_provenance {
    pm_param_info *items;
    size_t n, cap;
    char **strings;
    size_t n_strings, cap_strings;
};
pm_status pm_provenance_add(pm_provenance *p, const char *path, const char *file, double value,
                            const char *unit_si, const char *source);
/* A choice made by name (pm_param_info.value_text), origin "given". */
pm_status pm_provenance_add_text(pm_provenance *p, const char *path, const char *file,
                                 const char *text, const char *source);
/* pm_provenance_add with an origin other than "given" (a static string, see pm_param_info). */
pm_status pm_provenance_add_origin(pm_provenance *p, const char *path, const char *file,
                                   double value, const char *unit_si, const char *source,
                                   const char *origin);
void pm_provenance_free(pm_provenance *p);

/* ---- the strict object reader (json.c) ---- */

/* A JSON type's name for messages ("string", "number", ...). */
const char *pm_json_type_name(const cJSON *item);
/* Writes "base.key" into dst of size n (cut to fit: paths only serve messages). */
void pm_json_path_key(char *dst, size_t n, const char *base, const char *key);

#define PM_OBJ_MAX_KEYS 96

typedef struct pm_range {
    double lo, hi;
    bool lo_open, hi_open;
} pm_range;
/* (0, 1]: an efficiency or another fraction that must be positive (the readers). */
static const pm_range PM_RANGE_FRACTION = {0.0, 1.0, true, false};

/* The longest file path the loaders take, with its terminator: every path they keep (an error's
 * file, a component's, a key's origin) holds it whole; pm_resolve_ref refuses a longer one. */
#define PM_PATH_BYTES 1024
_Static_assert(PM_PATH_BYTES == sizeof(((pm_error *)0)->file), "pm_error.file holds a path");

/* A key of a merged object whose value came from another file, or from an override. */
typedef struct pm_key_origin {
    char key[64];
    const char *file; /* the file (the scenario's path, alive while it loads) or the override's
                         label ("override KEY=VALUE") */
    char *owned;      /* the label when the origin made it (freed with its component) */
    char path[64]; /* the JSON path of the object the key was written in, there */
} pm_key_origin;

/* An object being read: every key read or declared is remembered so that pm_obj_finish can
 * reject the rest with a suggestion. */
typedef struct pm_obj {
    const cJSON *json;
    const char *file;
    char path[256];           /* JSON path of this object, "$" or "$.cluster" */
    const char *file_source;  /* the file-level "source", for provenance */
    pm_provenance *prov;      /* may be NULL */
    const struct pm_key_origin *origins; /* keys that came from elsewhere (overrides, inline) */
    size_t n_origins;
    char origin_prefix[96];   /* a nested object's keys are origins' "outer.key" ("" top) */
    pm_error *err;
    const char *known[PM_OBJ_MAX_KEYS];
    pm_dimension known_dim[PM_OBJ_MAX_KEYS]; /* PM_DIM_NONE for plain keys */
    size_t n_known;
    bool lenient;             /* ignore unknown keys (HuggingFace config.json) */
    char prov_root[64];       /* when set, replaces the leading "$" of recorded paths */
} pm_obj;

void pm_obj_init(pm_obj *o, const cJSON *json, const char *file, const char *path,
                 pm_error *err);
/* Declares a key without reading it (so it is not "unknown"). */
void pm_obj_declare(pm_obj *o, const char *key, pm_dimension dim);
bool pm_obj_has(const pm_obj *o, const char *key);
pm_status pm_obj_string(pm_obj *o, const char *key, bool required, const char **out);
/* A string that names something into dst (n bytes with its terminator): refused at the key when
 * it does not fit, never cut (a cut name is another name in every output). dst is untouched when
 * the key is absent (and not required). */
pm_status pm_obj_name(pm_obj *o, const char *key, bool required, char *dst, size_t n);
/* The same check for a name that did not come from a key of o (e.g. a derived one): PM_OK when
 * it fits n bytes, else the failure at key. */
pm_status pm_obj_name_fits(pm_obj *o, const char *key, const char *name, size_t n);
pm_status pm_obj_bool(pm_obj *o, const char *key, bool required, bool *out);
/* Integer in [lo, hi]; *out unchanged when absent and not required. */
pm_status pm_obj_int(pm_obj *o, const char *key, bool required, long lo, long hi, long *out);
/* Dimensionless number (plain key, e.g. prefill_frac). */
pm_status pm_obj_number(pm_obj *o, const char *key, bool required, pm_range r, double *out);
/* Quantity "<base>_<unit>" of dimension dim, converted to SI, range checked in SI. */
pm_status pm_obj_quantity(pm_obj *o, const char *base, pm_dimension dim, bool required,
                          pm_range r, double *out);
/* One of names[]; *out receives the index. */
pm_status pm_obj_enum(pm_obj *o, const char *key, bool required, const char *const *names,
                      size_t n_names, int *out);
/* A sub-object; child is initialised on it. PM_ERR_TYPE when not an object. */
pm_status pm_obj_child(pm_obj *o, const char *key, bool required, pm_obj *child, bool *present);
/* Element i of o's array `array`, e, as an object: el is initialised on it at path
 * "<o's path>.array[i]", its provenance o's. PM_ERR_TYPE when e is not an object ("expected an
 * object <what>"). */
pm_status pm_obj_element(pm_obj *o, const char *array, int i, const cJSON *e, const char *what,
                         pm_obj *el);
/* Fails at key of o, naming the file (or override) where the key was written. */
pm_status pm_obj_fail(const pm_obj *o, const char *key, pm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Whether key of o was written by an override, not by a file. */
bool pm_obj_key_overridden(const pm_obj *o, const char *key);
/* Whether any key of o (or of an object nested in it) was written elsewhere than o's own file:
 * by an override, or by a scenario whose inline object derives it `from` that file. */
bool pm_obj_any_derived(const pm_obj *o);
/* Rejects keys never read or declared, with "did you mean". */
pm_status pm_obj_finish(pm_obj *o);
/* The known key of o nearest to key within the "did you mean" distance, or NULL. */
const char *pm_obj_nearest_known(const pm_obj *o, const char *key);
/* Records a value of key in o's provenance (a no-op without provenance) with an origin:
 * "defaulted", "derived" or "ignored" (values read by pm_obj_* are recorded as "given"). */
pm_status pm_obj_record(pm_obj *o, const char *key, double value, const char *unit_si,
                        const char *source, const char *origin);

/* ---- component readers (read_model.c, read_components.c), on a resolved JSON object ---- */

pm_status pm_model_read(pm_obj *o, pm_model *m);
pm_status pm_accelerator_read(pm_obj *o, pm_accelerator *a);
pm_status pm_cluster_read(pm_obj *o, pm_cluster *c);
pm_status pm_workload_read(pm_obj *o, pm_workload *w);
/* read_components.c: the accelerator's optional "gemm" object into *g (present false when
 * absent). */
pm_status pm_gemm_read(pm_obj *o, pm_gemm_params *g);
/* read_runtime.c: a runtime file (kind "runtime") into *r (present = true on success). */
pm_status pm_runtime_read(pm_obj *o, pm_runtime *r);
/* read_spec.c: a scenario's "speculative" block into *out (the draft model excepted: data.c
 * resolves and reads it). */
pm_status pm_read_speculation(pm_obj *o, pm_speculation *out);
/* read_lengths.c: a lengths file (kind "lengths") into *l. */
pm_status pm_lengths_read(pm_obj *o, pm_lengths *l);

/* ---- GEMM efficiency by shape (gemm_eff.c) ---- */

/* The share of the compute units an m x n GEMM's last wave leaves busy, (0, 1]; 1 without a
 * "gemm" object. */
double pm_gemm_wave_frac(const pm_accelerator *a, double m, double n);
/* The vector units' time converting a weight-only MatMul's weights (accelerator dequant_rate;
 * 0 when the weights are as wide as the compute type or no rate is given). */
double pm_gemm_dequant_s(const pm_scenario *s, const pm_node *n);
/* A GEMM's time from its compute and memory times, without the launch: max(c, m) +
 * overlap_loss min(c, m) + latency; max(c, m) without a "gemm" object. */
double pm_gemm_time(const pm_accelerator *a, double compute_s, double mem_s);

/* ---- the serving runtime's overheads and kernels (runtime.c) ---- */

/* The per-kernel launch cost: the runtime's when the scenario has one, else the
 * accelerator's. */
double pm_launch_s(const pm_scenario *s);
/* The decode-attention kernel's KV read efficiency: the runtime's own kernel's when it gives
 * one, else the accelerator's (0: the operators' HBM efficiency, cost.c). */
double pm_attention_hbm_frac(const pm_scenario *s);
/* The routed experts' GEMM kernel against a dense GEMM of the same shape: the runtime's when it
 * gives one, else 1. */
double pm_moe_gemm_frac(const pm_scenario *s);
/* The runtime's expert-GEMM compute table (pm_moe_gemm_curve) where it applies to this
 * scenario's accelerator, else NULL (no runtime, no table, or an accelerator the table does not
 * name); pm_moe_gemm_curve_frac: a table's fraction at tokens_per_expert (1 for an empty one). */
const pm_moe_gemm_curve *pm_moe_gemm_curve_of(const pm_scenario *s);
double pm_moe_gemm_curve_frac(const pm_moe_gemm_curve *c, double tokens_per_expert);
/* Whether the runtime's table leaves out the scenario's accelerator (a MoE model's warning). */
bool pm_moe_gemm_curve_off(const pm_scenario *s);
/* The engine's MoE routing kernels (issue 47): whether a MoE layer has its top-k, align and sum
 * nodes, and the align kernel's time over its launch for slots token slots (0 when off). */
bool pm_moe_routing_ops(const pm_scenario *s);
double pm_moe_align_s(const pm_scenario *s, double slots);
bool pm_fp8_act_quant(const pm_scenario *s);
/* The HBM the weights and the KV cache may take: the accelerator's capacity, times the runtime's
 * usable share when it gives one. */
double pm_hbm_usable_bytes(const pm_scenario *s);
/* What the runtime adds to one step (the embedding node carries it), seconds; 0 without one. */
double pm_runtime_step_s(const pm_scenario *s);
/* What the runtime adds to each allreduce, seconds; 0 without one. */
double pm_runtime_allreduce_s(const pm_scenario *s);

/* ---- file resolution (data.c) ---- */

/* Directory name under data/ for a kind ("models"). */
const char *pm_kind_dir(pm_file_kind kind);
/* Resolves a reference to a file path: an existing path, else data/<kind>s/<ref>.json (a
 * trailing ".json" on a name is ignored). out receives the path. */
pm_status pm_resolve_ref(const char *data_dir, pm_file_kind kind, const char *ref, char *out,
                         size_t n, pm_error *err);

/* pm_scenario_warning's list without the warnings `skip` names: those about a value a sweep
 * axis replaces (pm_sweep_warning gives the axis's own instead). */
enum {
    PM_WARN_SKIP_SEQ = 1u << 0,   /* the sequence beyond max_position_embeddings */
    PM_WARN_SKIP_SPLIT = 1u << 1, /* the uneven split over the devices (and expert ranks) */
    PM_WARN_SKIP_DIE = 1u << 2,   /* the die over the reticle (an l2 or compute axis) */
};
bool pm_scenario_warning_except(const pm_scenario *s, unsigned skip, size_t i, char *note,
                                size_t n);

/* ---- the datatype table (dtype.c) ---- */

/* The datatypes' names, indexed by pm_dtype (for pm_obj_enum); *count receives their number. */
const char *const *pm_dtype_names(size_t *count);
/* The names of the datatypes whose bit is set in mask (bit d: pm_dtype d), in table order and
 * separated by ", ", written into buf (n bytes, NUL included, cut if too small); returns buf. */
const char *pm_dtype_list(unsigned mask, char *buf, size_t n);
/* The bytes of one stored weight of a node of this role: pm_unquantised_weight_bytes for the
 * embedding, the LM head and a MoE router, pm_weight_elem_bytes for the other linears. */
double pm_role_weight_bytes(const pm_workload *w, pm_node_role role);
/* The input channels of an int4 weight's group: weight_group_size, or GPTQ's and AWQ's 128
 * when 0. */
int pm_weight_group_size(const pm_workload *w);

/* ---- topologies and allreduce algorithms (collective.c) ---- */

/* The topologies' and allreduce algorithms' names, indexed by their enums (for pm_obj_enum);
 * *count receives their number. */
const char *const *pm_topology_names(size_t *count);
const char *const *pm_allreduce_algo_names(size_t *count);
/* Whether algo can run on topology (PM_AR_AUTO: on every topology); false for an invalid algo. */
bool pm_allreduce_algo_allowed(pm_topology topology, pm_allreduce_algo algo);
/* PM_OK when algo can run on topology; PM_ERR_INVALID_ARG for values outside the enums,
 * PM_ERR_INCONSISTENT (at $.cluster.allreduce) when the topology cannot run it. */
pm_status pm_allreduce_algo_check(pm_topology topology, pm_allreduce_algo algo, pm_error *err);
/* Refuses an allreduce efficiency outside [0, 1] (0 acts as 1), NaN included. */
pm_status pm_allreduce_efficiency_check(const pm_cluster *c, pm_error *err);

/* ---- prefetch consumer semantics (schedule.c) ---- */

/* Their names, indexed by pm_prefetch_consumer (for pm_obj_enum); *count receives their
 * number. */
const char *const *pm_prefetch_consumer_names(size_t *count);

/* ---- the die-area model (area.c) ---- */

/* Fails with PM_ERR_MISSING at $.accelerator.<block>: the accelerator has no such object
 * ("area", "energy", "cost"). */
pm_status pm_block_missing(pm_error *err, const pm_accelerator *a, const char *block);

/* The dies of a package (its compute dies and I/O dies), and the largest of them, which the
 * reticle rule judges. The die cost, the reticle rule and the reports. */
int pm_dies_per_package(const pm_area *area);
double pm_largest_die_mm2(const pm_area *area);
/* "die" (a package of one), "compute die" or "I/O die": which of them is the largest. */
const char *pm_largest_die_name(const pm_area *area);
/* pm_die_over_reticle, and the largest die's name (pm_largest_die_name) in *name (may be NULL):
 * the reticle's warnings and refusal say which die. */
bool pm_die_over_reticle_named(const pm_accelerator *a, double *per_die_mm2, const char **name);

/* The I/O dies' holdings' names, indexed by pm_io_holds (for pm_obj_enum). */
const char *const *pm_io_holds_names(size_t *count);

/* ---- the die-cost model (die_cost.c) ---- */

/* The yield models' names, indexed by pm_yield_model (for pm_obj_enum); *count receives their
 * number. */
const char *const *pm_yield_model_names(size_t *count);
/* Each kind of die's dies per wafer and yield (compute dies 0, I/O dies 1), kept with the die
 * area and the cost fields they were found at (pm_device_cost_at); kept all false: none. */
typedef struct pm_die_memo {
    bool kept[2];
    double mm2[2], dpw[2], yield[2];
    double wafer_diameter_mm, defect_density_per_mm2, io_defect_density_per_mm2,
        yield_alpha; /* the cost fields read */
    pm_yield_model yield_model;
} pm_die_memo;
/* pm_area_compute in two parts: pm_area_check, the refusals (they read the area block and the
 * accelerator's name, never a capacity or a peak), and pm_area_of, the arithmetic of an
 * accelerator that passed it (every field of out set; padding left). An accelerator that
 * differs from a checked one only in its L2 capacity or peaks needs no check again (serve.c's
 * figures at a new L2 capacity). */
pm_status pm_area_check(const pm_accelerator *a, pm_error *err);
void pm_area_of(const pm_accelerator *a, pm_area *out);
/* pm_device_cost_compute with a's die area already found (pm_area_compute of a; NULL: found
 * here): the same figures and refusals, the area taken once where area, price and static power
 * are all asked (serve.c). memo (may be NULL): a die's dies per wafer and yield taken from it
 * where its area and the cost fields are the same bit for bit (an L2 axis moves the compute
 * die, not the I/O dies), else found and kept there. */
pm_status pm_device_cost_at(const pm_accelerator *a, const pm_area *area, pm_die_memo *memo,
                            pm_device_cost *out, pm_error *err);

/* ---- the accelerator's queries (accelerator.c) ---- */

/* The HBM bandwidth a bulk stream achieves (nominal x hbm_efficiency_frac), bytes/s. */
double pm_effective_hbm_bw(const pm_accelerator *a);
/* The dense peak of a datatype, flop/s; 0 when unsupported or dtype is invalid. */
double pm_peak_compute(const pm_accelerator *a, pm_dtype dtype);

/* ---- the parallel plan (plan.c) ---- */

/* The expert-parallel rules, their one home: a degree >= 1 (0 for 1), and above 1 only for a
 * model with experts in at least one layer, dividing the devices and the routed experts.
 * pm_shard_compute and pm_scenario_check both apply them. */
pm_status pm_plan_check_ep(const pm_scenario *s, pm_error *err);
/* The data-parallel attention rules (cluster.attention_data_parallel), their one home: a MoE
 * model, at least 2 devices, expert_parallel equal to devices; refused (PM_ERR_UNSUPPORTED at
 * the key) with sequence parallelism and pipeline stages. pm_shard_compute and
 * pm_scenario_check both apply them. */
pm_status pm_plan_check_attention_dp(const pm_scenario *s, pm_error *err);
/* The ranks s's attention runs data parallel over: devices with attention_data_parallel, else
 * 1 (the attention is tensor parallel over the group). */
int pm_plan_attn_ranks(const pm_scenario *s);
/* The sequences of a step of `sequences` that the busiest attention rank serves: all of them
 * under tensor-parallel attention, min(sequences, ceil(sequences / ranks)) under data-parallel
 * attention (a mean count below one lands whole on one rank; sequences / ranks with ideal
 * sharding). A mixed step's decode sequences and each chunk group's chunks take the same rule
 * (build.c's rank_step). */
double pm_plan_rank_sequences(const pm_scenario *s, double sequences);
/* The pipeline plan of a replica (plan.c, issue 44): its stages' layers, the micro-batches
 * in flight and which stage boundaries cross nodes. */
typedef struct pm_pipeline {
    int stages, replicas;
    int first[PM_MAX_STAGES], layers[PM_MAX_STAGES]; /* each stage's first layer, its layers */
    bool inter_node[PM_MAX_STAGES]; /* the send after stage i crosses nodes (the last stage's:
                                       the sampled token's return to the first) */
    int micro_batches;              /* M: cluster.micro_batches, or min(stages, batch) */
    int micro_batch;                /* sequences of the largest micro-batch: ceil(batch / M) */
    int nodes;                      /* nodes the deployment takes */
} pm_pipeline;
/* The plan of s's stages and replicas, checked: PM_ERR_RANGE, PM_ERR_INCONSISTENT (more stages
 * than layers, a pipeline_layers list that does not add up, a boundary across nodes without an
 * inter-node link, more nodes than the cluster has), PM_ERR_UNSUPPORTED (stages over layers of
 * several classes). */
pm_status pm_pipeline_plan(const pm_scenario *s, pm_pipeline *out, pm_error *err);
/* The layers of each stage: c's pipeline_layers, or the even split with the remainder one
 * layer each on the first stages. out holds pm_cluster_pp(c) values. */
void pm_pipeline_stage_layers(const pm_cluster *c, int layers, int *out);
/* s at one of pl's micro-batches (its largest: pl->micro_batch sequences): what a stage runs.
 * mb does not own s's provenance. */
void pm_pipeline_micro_scenario(const pm_scenario *s, const pm_pipeline *pl, pm_scenario *mb);
/* Bytes of one sampled token's id sent back from the last stage to the first (an int32). */
#define PM_TOKEN_ID_BYTES 4.0
/* What stage i of pl receives before its first node, in bytes: the previous stage's
 * activations (tokens x act_bytes, a token's hidden state), or on the first stage the ids of
 * `returned` sampled tokens from the last (0: nothing returns); nothing with one stage.
 * *inter: the boundary it crosses joins two nodes (the inter-node link). */
double pm_stage_recv_bytes(const pm_pipeline *pl, int i, double act_bytes, double tokens,
                           double returned, bool *inter);
/* c's stages (pm_cluster_pp(c) >= 2) over `layers` layers: `last` on the last stage (1 <= last
 * <= layers - PP + 1), the rest split evenly over the others, the remainder one layer each on
 * the first (the split sweep axis). */
void pm_pipeline_split_last(pm_cluster *c, int layers, int last);
/* PM_ERR_UNSUPPORTED naming $.cluster.pipeline_parallel when s has several stages: what (a
 * step's time, a served workload, a graph) is modelled for one stage only. */
pm_status pm_plan_refuse_stages(const pm_scenario *s, const char *what, pm_error *err);
/* The same for data-parallel replicas, naming $.cluster.data_parallel. */
pm_status pm_plan_refuse_replicas(const pm_scenario *s, const char *what, pm_error *err);
/* The same for data-parallel attention, naming $.cluster.attention_data_parallel. */
pm_status pm_plan_refuse_attention_dp(const pm_scenario *s, const char *what, pm_error *err);
/* A request over the stages of pl (pipeline.c): each mode's times, traffic (the average
 * device's) and the pipeline figures into out, the decode step's traffic at the last context
 * into tpot_traffic[mode]; the replicas' scaling is the caller's. */
pm_status pm_pipeline_estimate(const pm_scenario *s, const pm_pipeline *pl, pm_estimate *out,
                               pm_traffic *tpot_traffic, pm_error *err);
/* The decode steps' times over the stages of pl added one by one (in long double), in one mode:
 * the reference the tests hold pm_pipeline_estimate's adaptive decode sum against. */
pm_status pm_pipeline_decode_sum_stepwise(const pm_scenario *s, const pm_pipeline *pl,
                                          pm_mode mode, double *sum, pm_error *err);
/* A send between pipeline stages: alpha + bytes / B over the inter-node link (inter_node) or
 * the device link (collective.c); 0 for no bytes. */
double pm_p2p_time(const pm_cluster *c, bool inter_node, double bytes);

/* ---- the step (step.c) ---- */

/* What one step serves: the description the graph builder, the fast evaluator and the costs
 * take. Today one kind of work per step: the batch's decode tokens, every sequence at one
 * context, or the batch's prompts prefilled whole. Mixed steps (prefill chunks and decode
 * tokens) extend it. */
typedef struct pm_step {
    pm_phase phase;
    int64_t context;  /* decode: the positions each sequence has cached; prefill: each prompt's
                         tokens */
    double sequences; /* sequences served: each gets its next token (the LM head's rows) */
    double tokens;    /* tokens computed (the GEMMs' rows): sequences (decode), sequences x
                         context (prefill), or a mixed step's decode tokens and chunks */
    bool mixed;       /* prefill chunks beside decode tokens (mix); phase is then prefill */
    pm_mixed_step mix;
    double queries;   /* query tokens per decoding sequence: 1, or k + 1 in speculative
                         decoding's verify step (the next token and the k drafted) */
} pm_step;
/* The step of s's batch at phase and context: PM_ERR_INVALID_ARG for a bad phase or NULL,
 * PM_ERR_RANGE for a context below 1 (prefill) or 0 (decode). */
pm_status pm_step_of(const pm_scenario *s, pm_phase phase, int64_t context, pm_step *out,
                     pm_error *err);
/* The step of a mixed step description (pm_mixed_step): checked, with its sequences (decode
 * tokens and last chunks) and tokens; a step without chunks is a decode step of
 * decode_sequences sequences. Errors as pm_mixed_step_time. */
pm_status pm_step_mixed(const pm_scenario *s, const pm_mixed_step *m, pm_step *out,
                        pm_error *err);
/* The step's decoding sequences (a decode step's, or a mixed step's decode part). */
double pm_step_decode_sequences(const pm_step *step);
/* The query-key pairs a decoding sequence's `queries` tokens score beyond `queries` times one
 * query's at the step's context: their causal triangle, 0 + 1 + ... + (queries - 1) (the
 * drafted tokens of a verify step each see those before it; a window is taken as sliding by
 * less than `queries` positions, as it does for every window a model declares). */
double pm_step_query_triangle(const pm_step *step);

/* ---- speculative decoding (speculate.c) ---- */

/* Checks s's speculation (a zeroed block passes): the drafted tokens and their acceptance, the
 * method's own fields, the draft model against the target (vocabulary, sharding over the
 * devices), and refuses what is not modelled (pipeline stages). Errors name
 * $.speculative.<key>: PM_ERR_RANGE, PM_ERR_INVALID_ARG, PM_ERR_UNSUPPORTED, or the draft
 * model's own check. */
pm_status pm_spec_check(const pm_scenario *s, pm_error *err);
/* Whether s speculates (draft_tokens > 0). */
bool pm_spec_active(const pm_scenario *s);
/* PM_ERR_UNSUPPORTED at $.speculative when s speculates: `what` ("a served workload", "a
 * disaggregated pool") does not model verify steps yet; PM_OK otherwise. */
pm_status pm_spec_refuse(const pm_scenario *s, const char *what, pm_error *err);
/* The scenario of s's draft steps into *draft: s without its speculation, its model the draft
 * model (PM_SPEC_DRAFT_MODEL) or the target's first mtp_layers layers (PM_SPEC_MTP). */
void pm_spec_draft_scenario(const pm_scenario *s, pm_scenario *draft);
/* A served workload's speculation (issue 45): decode steps per output token after the first
 * (1 / E; 1 without speculation), so a request decodes in (output - 1) / E steps, a mean
 * (the accepted run is random), never rounded up. */
double pm_spec_steps_per_token(const pm_scenario *s);
/* Query tokens a decoding sequence puts in a step, the verify step's k + 1 (1 without). */
int pm_spec_verify_tokens(const pm_scenario *s);
/* The draft's work in a served step m (its decode tokens the draft's own, one per sequence):
 * *first, its first forward beside m's chunks (the draft prefills the prompts too: EAGLE's
 * and MTP's draft extend), and *rest, one more drafting step of m's decoding sequences
 * alone, which runs k - 1 times (*rest_count; 0 when m has no decoding sequence, or k = 1). */
/* st, with err's message prefixed "the draft steps: " at $.speculative when st fails. */
pm_status pm_spec_draft_failed(pm_status st, pm_error *err);
void pm_spec_draft_steps(const pm_scenario *s, const pm_mixed_step *m, pm_mixed_step *first,
                         pm_mixed_step *rest, double *rest_count);
/* A served step's decode tokens as verify tokens: m's decoding sequences each put k + 1 tokens
 * in it when s speculates (m unchanged otherwise). */
void pm_spec_verify_step(const pm_scenario *s, pm_mixed_step *m);
/* Adds count times the time of step m under the draft's scenario d to the caller's sums (its
 * own evaluator: every mode, traffic or joules as it keeps them). */
typedef pm_status (*pm_spec_step_adder)(void *ctx, const pm_scenario *d, const pm_mixed_step *m,
                                        double count, pm_error *err);
/* The draft's share of served step m (the verify step of s, its decode tokens as
 * pm_spec_verify_step leaves them), on the same devices: its first forward beside m's chunks
 * once, then its k - 1 drafting steps (pm_spec_draft_steps), each handed to add; PM_OK at
 * once when s does not speculate. add's error comes back prefixed as pm_spec_draft_failed's. */
pm_status pm_spec_draft_time(const pm_scenario *s, const pm_mixed_step *m,
                             pm_spec_step_adder add, void *ctx, pm_error *err);

/* ---- the model (model.c), the graph (graph.c, build.c), the schedule ---- */

/* Whether the projection of role has a bias in m (model.c); its bias has one element per
 * output column, of pm_bias_bytes each (model.c). */
bool pm_model_role_has_bias(const pm_model *m, pm_node_role role);
double pm_bias_bytes(const pm_workload *w);
/* The node kinds' names (graph.c), indexed by pm_node_kind (for pm_obj_enum); *count receives
 * their number. */
const char *const *pm_node_kind_names(size_t *count);
void pm_graph_clear(pm_graph *g);
/* The node alone, as pm_graph_add_node checks it: NULL when fine, else the name of the field at
 * fault ("kind", "trigger", "weight_bytes"...). Index fields are checked against the graph by
 * pm_graph_check. */
const char *pm_node_fault(const pm_node *n);
pm_status pm_graph_reserve(pm_graph *g, size_t nodes, size_t edges);
/* pm_graph_build of one step, with the fused baseline's O+AllReduce and Down+AllReduce nodes
 * when fused. */
pm_status pm_graph_build_ex(const pm_scenario *s, const pm_step *step, int layers, bool fused,
                            pm_graph *g, pm_error *err);
/* Some of a graph's layers: a pipeline stage's (issue 44). */
typedef struct pm_graph_part {
    int first, layers;   /* decoder layers first .. first + layers - 1 */
    bool head, tail;     /* the embedding before them, the final norm and LM head after */
    double recv_bytes;   /* > 0: a receive (PM_NODE_RECV) of this many bytes opens the graph */
    bool inter_node;     /* the receive crosses the nodes' link */
} pm_graph_part;
/* pm_graph_build_ex of a part's layers (the whole model: {0, layers, true, true, 0, false}). */
pm_status pm_graph_build_part(const pm_scenario *s, const pm_step *step, const pm_graph_part *part,
                              bool fused, pm_graph *g, pm_error *err);
/* The graph path's time of stage `stage` of s's pipeline plan (reference.c; one micro-batch,
 * its receive included, gap_s of idle before the receive ends given to its window and not
 * counted): the reference of pm_step_plan_stage_eval; *recv_pf_s (may be NULL) the time of the
 * prefetches the receive triggers, alone. */
pm_status pm_stage_time_graph(const pm_scenario *s, pm_mode mode, pm_phase phase, int64_t ctx,
                              int stage, double gap_s, double *time_s, double *recv_pf_s,
                              pm_error *err);
/* Time of a prefetch op given share (0, 1] of the HBM bandwidth (processor sharing). */
double pm_op_time_shared(const pm_op_cost *c, double share);
/* Schedules with caller-provided costs and slots (s gives the HBM sharing option and the
 * consumer semantics). Returns PM_ERR_INCONSISTENT when a consumer's prefetch can never start. */
pm_status pm_schedule_run(const pm_scenario *s, const pm_graph *g, const pm_op_cost *costs,
                          pm_slot *slots, pm_schedule *sched, pm_error *err);

/* ---- the KV transfer between disaggregated pools (collective.c) ---- */
/* One request's KV cache sent by one prefill device (bytes) at rate_per_s requests/s on its
 * link, after (or, layer-streamed over `layers` layers, during) a prefill of prefill_s. */
typedef struct pm_kv_transfer {
    double bytes, bandwidth_bytes_per_s, latency_s, rate_per_s, prefill_s;
    int layers;
    bool layer_streamed;
} pm_kv_transfer;
/* The transfer's time exposed after the prefill; *in_flight (may be NULL) the transfers that
 * share the link. INFINITY when the link cannot carry the rate. */
double pm_kv_transfer_time(const pm_kv_transfer *t, double *in_flight);

/* ---- the fast evaluator (collective.c, build.c, cost.c, schedule.c, step_plan.c) ---- */

/* An allreduce model precomputed for one cluster and algorithm: the candidates' affine times
 * fixed + per_byte x n; the requested (or, for auto, the fastest) applies. */
typedef struct pm_ar_model {
    pm_allreduce_algo algo[4];
    double fixed[4], per_byte[4];
    int n;              /* 0: the algorithm cannot run on the topology */
    bool single_device; /* every allreduce takes 0 */
} pm_ar_model;
void pm_ar_model_init(const pm_cluster *c, pm_allreduce_algo algo, pm_ar_model *m);
double pm_ar_model_time(const pm_ar_model *m, double bytes, pm_allreduce_algo *used);
/* The model of the fused GEMM+allreduce kernel's communication: fused_latency_s as alpha. */
void pm_ar_model_init_fused(const pm_cluster *c, pm_ar_model *m);
/* Bytes one device sends over its links in one allreduce of n bytes, for the algorithm m picks
 * (collective.c). */
double pm_ar_link_bytes(const pm_cluster *c, const pm_ar_model *m, double n);
/* Sequence parallelism's halves (collective.c): the model of one reduce-scatter or all-gather
 * (they cost the same; pm_reduce_scatter_time states the rule), timed by pm_ar_model_time, and
 * the bytes one device sends in one of n bytes. */
void pm_rs_model_init(const pm_cluster *c, pm_allreduce_algo algo, pm_ar_model *m);
double pm_rs_link_bytes(const pm_cluster *c, const pm_ar_model *m, double n);

/* The all-to-all (MoE dispatch and combine) over the EP ranks: affine in the message. */
typedef struct pm_a2a_model {
    double fixed, per_byte;
    int ranks; /* <= 1: every all-to-all takes 0 */
} pm_a2a_model;
void pm_a2a_model_init(const pm_cluster *c, pm_a2a_model *m);
double pm_a2a_model_time(const pm_a2a_model *m, double bytes);
/* Bytes one device sends in an all-to-all of n bytes: the shares for the other ranks. */
double pm_a2a_link_bytes(const pm_cluster *c, double n);

/* One decoder layer's nodes, and the nodes before and after the layers, as the graph builder
 * makes them (without names or edges): layers repeat exactly, so this is all the fast path
 * needs. */
#define PM_TEMPLATE_MAX 32

/* One node of a step plan (step_plan.c) with its costs: from HBM, from L2 after a prefetch, and
 * its prefetch (defined here: a row keeps one, pm_cost_row). */
typedef struct pm_step_node {
    pm_op_cost hbm;   /* served from HBM */
    pm_op_cost l2;    /* prefetched, served from L2 (when bytes > 0 and prefetching) */
    pm_op_cost pf;    /* its prefetch on the prefetch stream */
    double bytes;     /* prefetchable bytes (Algorithm 1's M(n)) */
    bool is_comm, is_ar;
    bool is_a2a;      /* an all-to-all: its window may prefetch routed experts */
    bool is_rs, is_ag; /* sequence parallelism's reduce-scatter (whose window runs through the
                          all-gather after it: insert.c) and all-gather */
    bool routed;      /* routed experts: prefetchable only under an all-to-all */
} pm_step_node;

/* A node's roofline as coefficients (cost.c, issue 46 item 3): what of pm_op_cost_node reads no
 * hardware, computed once per node of a template, and what the accelerator's GEMM rules give
 * it (gemm_eff.c's wave fraction and dequantisation time), kept with the accelerator fields
 * they read (pm_cost_key). Costing a row at a hardware point (pm_op_cost_row, _pair_row) is a
 * few divisions, a max and adds, in the order pm_op_cost_node takes them: bit for bit its
 * cost. */
typedef struct pm_cost_row {
    double flop;
    double act_bytes, weight_bytes, kv_bytes, l2_bytes; /* the node's */
    double compulsory_bytes; /* act + weight: what the tiling bound's traffic is beyond */
    double tile_bytes;       /* 2 m n k e, the tiling bound's traffic times sqrt(C / e) (a GEMM
                                with m > 0); C* = e (tile / compulsory)^2 is the L2 capacity
                                below which it exceeds the compulsory bytes */
    double wave_frac;        /* pm_gemm_wave_frac at the key's accelerator (a GEMM with m > 0) */
    double dequant_s;        /* pm_gemm_dequant_s at the key's accelerator (the same) */
    double align_s;          /* a MoE align kernel's time (runtime.c), else 0 */
    double expert_rows;      /* a routed GEMM's rows m, its tokens per expert (the runtime's
                                expert compute table reads it), else 0 */
    int dtype;               /* the compute datatype, -1 when none */
    int kv_bw;               /* the KV reads' bandwidth: pm_cost_ctx.kv_bw's index */
    bool attention;          /* an attention kernel: its peak, its KV served from L2 first,
                                the accelerator's attention latency */
    bool gemm;               /* a GEMM with m > 0: wave, dequantisation, tiling bound */
    bool knee;               /* a MatMul: gemm_eff.c's knee and fixed time (pm_gemm_time) */
    bool grouped;            /* routed experts' GEMM: the engine's grouped kernel's fraction */
    bool embedding;          /* the step's host work precedes it (runtime.c) */
    /* Its costs kept (issue 46 item 3; step_plan.c's): those at the hardware point of the
     * rows' key (pm_cost_key.at; kept_gen its gen: made), with the tiling bound off (at
     * pm_cost_ctx_unbounded): a node's costs at any point of that pm_cost_hw where its tiling
     * bytes (pm_cost_row_tiling) are 0, bit for bit. */
    bool keepable;           /* its node's cost reads of the hardware only pm_cost_hw and the
                                tiling bound (pm_cost_row_keepable) */
    uint64_t kept_gen;       /* 0: none kept */
    pm_step_node kept;
    /* A MatMul's: the cost of its fused node (its allreduce absorbed: fuse_class), kept the
     * same way, and the fused node's message and chunk option it was made for. */
    uint64_t fused_gen;      /* 0: none kept */
    double fused_comm_bytes;
    int fused_chunks;
    pm_op_cost fused;
} pm_cost_row;
/* What the costs of a plan's nodes read of the hardware beyond each row's tiling bound (cost.c,
 * pm_cost_hw_init): the peaks, bandwidths and fixed times of pm_cost_ctx, gemm_eff.c's knee, the
 * attention's latency, the step's host work, the allreduce models and start-up, the fused
 * kernel's chunk half-efficiency and whether the prefetched variants are costed. Doubles only
 * (no padding): compared with memcmp, bit for bit. Where two points' are equal, a node costed
 * at one costs the same at the other unless its tiling bytes differ (issue 46 item 3). */
typedef struct pm_cost_hw {
    double peak[PM_DTYPE_COUNT], att_peak[PM_DTYPE_COUNT];
    double bw, kv_bw[4], l2_bw, pf_bw, launch_s, moe_frac;
    double moe_curve; /* 1 where the runtime's expert compute table applies */
    double gemm_present, gemm_overlap_loss_frac, gemm_latency_s, attention_latency_s;
    double host_s, allreduce_s, chunk_half_bytes, prefetching;
    double ar[14], ar_fused[14]; /* the models field by field (hw_model) */
} pm_cost_hw;
/* The accelerator fields a row's GEMM terms read (gemm.present, compute_units, tile_m, tile_n,
 * dequant_elem_per_s): rows made at one key serve every scenario of the same key. */
typedef struct pm_cost_key {
    double v[5];
    /* The hardware point the rows' kept costs are made at (the last point costed:
     * pm_cost_key_at) and its number (0: no point yet): a row's kept costs serve where its
     * kept_gen is gen; else they are made again at this point, and kept where keep (the
     * rows' first point, or the second in a row at this pm_cost_hw). */
    pm_cost_hw at;
    uint64_t gen;
    bool keep;
} pm_cost_key;
/* The rows of a template's nodes (step_plan.c fills them; the builder does not). */
typedef struct pm_template_rows {
    bool ready;      /* filled for the template's nodes at key */
    pm_cost_key key;
    pm_cost_row head[PM_TEMPLATE_MAX], layer[PM_TEMPLATE_MAX], tail[PM_TEMPLATE_MAX];
    pm_cost_row moe[PM_TEMPLATE_MAX], attn_local;
} pm_template_rows;

/* What one node of a plan moves (kept apart from its costs, which the time path reads). */
typedef struct pm_step_traffic {
    pm_traffic tr;    /* served from HBM */
    pm_traffic tr_pf; /* prefetched: it and its prefetch */
} pm_step_traffic;

/* What a template's nodes move (step_plan.c's pm_step_plan_count fills it; issue 46 item 3):
 * at the hardware point it was counted at, and at a later one once the terms that read the
 * hardware are counted again (HBM and link bytes, what a streaming consumer reads back); the
 * rest (MACs per datatype, L2 bytes written and read) reads only the nodes and is kept. */
typedef struct pm_template_counts {
    bool ready;       /* counted for the template's nodes, with the prefetched variants when
                         prefetching */
    bool prefetching;
    pm_step_traffic layer[PM_TEMPLATE_MAX], tail[PM_TEMPLATE_MAX], moe[PM_TEMPLATE_MAX];
    pm_step_traffic attn_local;
    pm_traffic rest;  /* the plan's plain_rest_tr at that point: its MACs and L2 bytes hold */
} pm_template_counts;
/* The fused baseline's layers of a template (pm_template_fuse_layer's, per MLP class: it reads
 * no hardware, so made once; step_plan.c's pm_step_plan_fuse fills it, stale like rows). */
typedef struct pm_template_fused {
    bool ready;       /* made for the template's nodes at `chunks` */
    int chunks;       /* the scenario's fused_chunks option it was made at */
    pm_node layer[2][PM_TEMPLATE_MAX];
    int map[2][PM_TEMPLATE_MAX], n[2];
    bool counted;     /* rest holds the fused plan's plain_rest_tr at a point of this template */
    pm_traffic rest;  /* its MACs and L2 bytes hold at any point (pm_template_counts) */
} pm_template_fused;

typedef struct pm_template {
    pm_node head[PM_TEMPLATE_MAX], layer[PM_TEMPLATE_MAX], tail[PM_TEMPLATE_MAX];
    int n_head, n_layer, n_tail;
    pm_node moe[PM_TEMPLATE_MAX]; /* a MoE layer (global attention), when the model has one */
    int n_moe;                    /* 0: no MoE layers */
    pm_moe_reads moe_reads;       /* MoE models: the expert reads at the step's tokens */
    /* The layer's attention node elsewhere: decode, one position on (the plans' slope per
     * position); with windowed layers, a local layer's at the context. Unset otherwise. */
    pm_node attn_next, attn_local;
    double kv_group; /* query heads each KV head serves on the busiest device */
    pm_template_rows rows; /* each node's roofline coefficients (step_plan.c; not the builder's:
                              pm_step_plan_build_like marks them stale) */
    pm_template_counts counts; /* what its nodes move (step_plan.c; stale like rows) */
    pm_template_fused fused;   /* its fused baseline's layers (step_plan.c; stale like rows) */
} pm_template;
pm_status pm_template_build(const pm_scenario *s, const pm_step *step, bool fused, pm_template *t,
                            pm_error *err);
/* pm_footprint_compute with the expert reads at the batch's tokens given (reads, e.g. a decode
 * template's, which has them; NULL: computed here). */
/* What s's speculation adds to a device beside the target (issue 45): the draft's weights (a
 * draft model's whole; MTP's layers only, the embedding and head being the target's) and the
 * draft's KV cache of s's batch at context_len. Zero without speculation. */
pm_status pm_footprint_draft(const pm_scenario *s, int64_t context_len, double *weight_bytes,
                             double *kv_bytes, pm_error *err);
pm_status pm_footprint_compute_reads(const pm_scenario *s, const pm_shard *shard,
                                     int64_t context_len, const pm_moe_reads *reads,
                                     pm_footprint *out, pm_error *err);
/* Whether fp's weights and KV cache fit the usable HBM of one device (the runtime's share of
 * hbm_capacity_bytes): the one home of pm_estimate's fits_hbm. */
bool pm_footprint_fits_hbm(const pm_scenario *s, const pm_footprint *fp);
/* The weights and KV cache (bytes) a device of stage i of pl holds, from the whole model's
 * footprint fp: the stage's layers and their KV at fp's context, the embedding on the first
 * stage (with tied embeddings the LM head's rows too), the LM head on the last
 * (footprint.c). */
void pm_footprint_stage(const pm_scenario *s, const pm_footprint *fp, const pm_pipeline *pl,
                        int i, double *weights, double *kv);
/* The longest context at which the footprint fits (pm_footprint_fits_hbm): -1 when the weights
 * alone do not, INT64_MAX when every context fits (every layer's cache stops at a window). */
pm_status pm_footprint_max_context(const pm_scenario *s, const pm_shard *shard,
                                   const pm_moe_reads *reads, int64_t *out, pm_error *err);
/* The fused baseline's layer from an unfused template layer (n_in nodes), as the builder makes
 * it: every MatMul followed by an allreduce becomes one fused node (the MoE all-to-alls are not
 * fused). map[i] is the output index of input node i (-1 for the allreduces absorbed). */
void pm_template_fuse_layer(const pm_node *in, int n_in, int chunks, pm_node *out, int *n_out,
                            int *map);
/* The one home of the window rules (model.c): the positions a decode step reads at
 * context ctx, per KV head of the cache (a device's KV heads each serving `group` query heads)
 * and, into *score (may be NULL), per query head (its flops): ctx, min(ctx, window) in a local
 * layer, ctx mod chunk with chunked attention, or in a block-sparse layer W + f (ctx - W) past
 * the W positions of its local blocks (f: the vertical blocks' share, which differs between the
 * two); whether both are affine in the context over a..b (they kink at pm_local_kink, the
 * window, the chunk ends or W; 0 without local layers); the positions a layer's cache holds
 * (for the footprint): ctx, or min(ctx, window or chunk); and the query-key pairs per query
 * head of causal attention over a prompt of n tokens: n^2 / 2, with a window W and n > W
 * W^2 / 2 + (n - W) W, with chunks of C (n / C) C^2 / 2 + (n mod C)^2 / 2, block-sparse
 * W^2 / 2 + (n - W) W + (n - W)^2 / (2 stride). */
double pm_kv_tokens(const pm_model *m, bool local, double group, int64_t ctx, double *score);
bool pm_kv_tokens_affine(const pm_model *m, bool local, int64_t a, int64_t b);
int64_t pm_local_kink(const pm_model *m);
double pm_kv_held_tokens(const pm_model *m, bool local, int64_t ctx);
double pm_causal_pairs(const pm_model *m, bool local, int64_t n);

/* What the roofline of every node of one scenario shares (cost.c): computed once (per plan,
 * per graph schedule), not per node, since a design point's estimate costs dozens of nodes. */
typedef struct pm_cost_ctx {
    const pm_scenario *s;
    double peak[PM_DTYPE_COUNT];      /* the peak per datatype x compute efficiency */
    double att_peak[PM_DTYPE_COUNT];  /* the same at the attention kernels' efficiency */
    double elem[PM_DTYPE_COUNT];      /* an element's bytes (1 for a datatype without) */
    double tile_root[PM_DTYPE_COUNT]; /* sqrt(L2 capacity / element bytes): the tiling bound */
    double bw;                        /* operators' HBM bandwidth */
    double kv_bw[4];                  /* the KV reads': [kv_strided + 2 kv_paged] (a kv_paged
                                         node's at the runtime's
                                         paged_attention_efficiency_frac) */
    double l2_bw, pf_bw;              /* L2, and the prefetcher's bulk HBM stream */
    double launch_s;                  /* per kernel (pm_launch_s) */
    double moe_frac;                  /* routed experts' GEMM kernel (pm_moe_gemm_frac) */
    const pm_moe_gemm_curve *moe_curve; /* their compute by tokens per expert, where the
                                         runtime's table applies to the accelerator; else NULL */
} pm_cost_ctx;
void pm_cost_ctx_init(const pm_scenario *s, pm_cost_ctx *k);

/* The cost of one node (pm_op_cost_compute without the graph); ar may be NULL. */
void pm_op_cost_node(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_node *n,
                     pm_op_cost *out);
/* Node n's row (pm_cost_row) at s's accelerator, and the key it was made at. */
void pm_cost_row_init(const pm_scenario *s, const pm_node *n, pm_cost_row *r);
void pm_cost_key_init(const pm_scenario *s, pm_cost_key *key);
/* Whether rows made at key serve s (its accelerator's GEMM fields are key's, bit for bit). */
bool pm_cost_key_same(const pm_scenario *s, const pm_cost_key *key);
/* The tiling bound's HBM bytes beyond the compulsory ones of row r at k's L2 capacity (0 but for
 * a GEMM with m > 0): the one term of a row's cost that reads the L2 capacity. */
double pm_cost_row_tiling(const pm_cost_ctx *k, const pm_cost_row *r);
/* Whether r's node's cost reads of the hardware only what pm_cost_hw holds and r's tiling bound
 * at k (not a reduce-scatter, all-gather, all-to-all or receive, a GEMM without a datatype, nor
 * a grouped GEMM under the runtime's expert compute table): then it may be kept
 * (pm_cost_row.kept). */
bool pm_cost_row_keepable(const pm_cost_ctx *k, const pm_cost_row *r);
/* k at an L2 capacity past every GEMM's tiling kink (its tiling roots infinite): a keepable row
 * costs there what it costs at k's point where its tiling bytes are 0, bit for bit. */
void pm_cost_ctx_unbounded(const pm_cost_ctx *k, pm_cost_ctx *out);
/* What the node costs of a plan of k, its allreduce models and prefetching read of the
 * hardware (pm_cost_hw). */
void pm_cost_hw_init(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                     bool prefetching, pm_cost_hw *h);
/* The rows' key at a point of h: where h is not key->at, key->at becomes h under a new gen (the
 * rows' kept costs, made at the old key->at, are then stale), kept again at the next point
 * of h (key->keep). */
void pm_cost_key_at(pm_cost_key *key, const pm_cost_hw *h);
/* pm_op_cost_node of n from its row r (pm_cost_row_init at a scenario of k's key). */
void pm_op_cost_row(const pm_cost_ctx *k, const pm_ar_model *ar, const pm_node *n,
                    const pm_cost_row *r, pm_op_cost *out);
/* pm_op_cost_pair of a node from its row r. */
void pm_op_cost_pair_row(const pm_cost_ctx *k, const pm_cost_row *r, double l2_bytes,
                         pm_op_cost *hbm, pm_op_cost *l2);

/* A plain operation (not communication or prefetch) costed twice at once: as the node is, and
 * with l2_bytes served from L2. */
void pm_op_cost_pair(const pm_cost_ctx *k, const pm_node *n, double l2_bytes, pm_op_cost *hbm,
                     pm_op_cost *l2);
/* The cost of prefetching bytes from HBM into L2 (a PREFETCH node). */
void pm_prefetch_cost(const pm_cost_ctx *k, double bytes, pm_op_cost *out);
/* The sum of the times from HBM of n operations (n >= 1) whose flops and bytes step evenly
 * from first's to last's (attention nodes along the contexts of a decode range, where the
 * positions read grow by one per step or not at all): plain_cost's time, the maximum of two
 * affine terms plus constants, summed in closed form. Not for a MatMul (its knee is not
 * affine), a communication or a prefetch. Equal to adding the n times one by one to within
 * rounding (a few ulps relative; PM_CLOSED_FORM_REL_TOL in the header states what the tests
 * assert). */
double pm_op_cost_sum_even(const pm_cost_ctx *k, const pm_node *first, const pm_node *last,
                           int64_t n);

/* One operation of the compact two-stream schedule. */
typedef struct pm_sim_op {
    const pm_op_cost *cost;
    int wait;     /* main: index of its prefetch among the prefetch ops, or -1;
                     prefetch: index of its trigger among the main ops, or -1 */
    bool is_comm; /* main: an ALLREDUCE node (counted in comm_s) */
    const pm_op_cost *hbm; /* main, streaming consumer (PM_CONSUMER_STREAM): its cost with
                              nothing prefetched; NULL: it waits for its prefetch */
    const pm_op_cost *l2;  /* main, streaming consumer that reads HBM (pm_stream_consumer_cost:
                              its L2 is the slower): its prefetched variant, which it reads
                              instead where HBM shared with a prefetch is slower still and its
                              data has arrived (hbm_sharing); else NULL */
} pm_sim_op;
/* The cost a streaming consumer runs at: served from L2 (l2, the prefetched variant) unless
 * reading HBM itself is faster (L2 bandwidth below the effective HBM bandwidth), when it
 * ignores the prefetch and reads HBM (hbm): a streaming consumer is never slower than its own
 * HBM reads. The one home of that rule for the event loop and the fast recurrence. */
static inline const pm_op_cost *pm_stream_consumer_cost(const pm_op_cost *l2,
                                                        const pm_op_cost *hbm)
{
    return hbm->total_s < l2->total_s ? hbm : l2;
}

/* A streaming consumer's op of the event loop (its prefetch the wait-th): it runs at
 * pm_stream_consumer_cost's cost, hbm its variant with nothing prefetched, and, where it reads
 * HBM, l2 its prefetched variant (read instead beside a prefetch under sharing). */
static inline pm_sim_op pm_stream_consumer_op(const pm_op_cost *l2, const pm_op_cost *hbm,
                                              int wait, bool is_comm)
{
    const pm_op_cost *c = pm_stream_consumer_cost(l2, hbm);
    return (pm_sim_op){c, wait, is_comm, hbm, c == hbm ? l2 : NULL};
}

/* Whether a node of kind k is an unfused communication node: an allreduce, an all-to-all,
 * sequence parallelism's reduce-scatter and all-gather, or a pipeline stage's receive. Each
 * opens a window for Algorithm 1. */
static inline bool pm_kind_is_collective(pm_node_kind k)
{
    return k == PM_NODE_ALLREDUCE || k == PM_NODE_ALLTOALL || k == PM_NODE_REDUCE_SCATTER ||
           k == PM_NODE_ALL_GATHER || k == PM_NODE_RECV;
}

/* Schedules main ops in order and prefetch ops in order (schedule.c documents the rules).
 * main_slots and pf_slots receive the times. Returns PM_ERR_INCONSISTENT when stuck. */
pm_status pm_sim_run(const pm_sim_op *main_ops, size_t n_main, const pm_sim_op *pf_ops,
                     size_t n_pf, bool hbm_sharing, pm_slot *main_slots, pm_slot *pf_slots,
                     pm_schedule *totals);

/* The fast step evaluator (step_plan.c): a plan holds one layer's nodes and costs for a scenario,
 * phase and mode family (fused or not); evaluations at other decode contexts recompute the
 * attention node only. */
/* One segment of a step's schedule (step_plan.c): main ops in order, each with its cost, its
 * prefetch (or -1) and, per prefetch, the main op that triggers it. */
typedef struct pm_step_seg {
    const pm_op_cost *cost[2 * PM_TEMPLATE_MAX + 1];
    int pf[2 * PM_TEMPLATE_MAX + 1];   /* index into pf_cost, -1 */
    int trig[2 * PM_TEMPLATE_MAX + 1]; /* index of the main op triggering prefetch k */
    const pm_op_cost *pf_cost[2 * PM_TEMPLATE_MAX + 1];
    const pm_op_cost *hbm_cost[2 * PM_TEMPLATE_MAX + 1]; /* consumers: with nothing in L2 */
    bool is_ar[2 * PM_TEMPLATE_MAX + 1];
    bool is_rs[2 * PM_TEMPLATE_MAX + 1]; /* a reduce-scatter: the next all-gather triggers
                                            nothing, its window runs on */
    int n, n_pf;
} pm_step_seg;

/* The two-stream recurrence's state (no HBM sharing) after the first k ops of a segment. */
typedef struct pm_step_seg_pos {
    int k, next_pf;    /* ops run, prefetches placed */
    double t, pf_free; /* the main stream's end, the prefetch stream's */
} pm_step_seg_pos;
typedef struct pm_step_seg_state {
    bool known; /* held for the region's decisions */
    pm_step_seg_pos pos;
    double op_start[2 * PM_TEMPLATE_MAX + 1], pf_end[2 * PM_TEMPLATE_MAX + 1];
} pm_step_seg_state;

/* A PRESERVE step of a plan compiled for one set of insertion decisions: the decisions, the
 * attention nodes and the schedule's segments, which point at the region's own attention, so
 * a region is evaluated where it was made (not copied). Within a range of contexts whose ends
 * have the same signature the decisions hold throughout (they change one way only as the
 * cache grows), so one region serves every evaluation of the range: an evaluation then costs
 * the attention and runs the segments, without Algorithm 1 or building the segments. */
typedef struct pm_step_region {
    const struct pm_step_plan *p;
    bool prefetches; /* false: the plan prefetches nothing, evaluations are sums of nodes */
    unsigned sig;    /* pm_step_plan_signature's value at the context it was made at */
    int64_t next;    /* and about where the decisions change next, as it says (or -1) */
    pm_step_node attn[2]; /* each class's attention at the context last evaluated, */
    int64_t attn_ctx;     /* that context (-1: none yet) */
    const pm_step_node *L[2][2][PM_TEMPLATE_MAX]; /* [attention class][MLP class] */
    /* Insertion decisions: pf[c][m], a layer's own windows (from its first communication on,
     * and sequence parallelism's window before the attention); lead[m][c][m2], the nodes
     * before the first communication of a layer of attention class c and MLP class m2 that
     * the last window of a layer of MLP class m before it prefetches; pft, the tail's. */
    bool pf[2][2][PM_TEMPLATE_MAX], lead[2][2][2][PM_TEMPLATE_MAX], pft[PM_TEMPLATE_MAX];
    pm_step_seg period[2][2][2], last; /* as n_pair: [MLP class][next attention, MLP class] */
    /* A period's ops before the next layer's attention (its first op whose cost changes with
     * the context, at period_k0) are the same at every context of the region: the schedule's
     * state there is kept after the first evaluation and each later one resumes from it. */
    int period_k0[2][2][2];
    pm_step_seg_state period_at[2][2][2];
    /* The last layer from its first communication and the tail hold no attention: their time
     * is the same at every context of the region, scheduled once (last_s, once last_known). */
    bool last_known;
    double last_s;
} pm_step_region;

/* PRESERVE's decisions at a plan's step, kept in the plan's room from one hardware point to the
 * next (step_plan.c's pm_step_plan_modes; issue 46 item 3). Algorithm 1 reads the prefetchable
 * bytes and the window's capacity only, each comparison a running sum strictly under the
 * capacity: every capacity in (cap_lo, cap_hi] answers each alike, so with the same bytes (bit
 * for bit) the same decisions follow. The traffic summed with them (sum) holds at a later point
 * in the fields that read no hardware (MACs, L2 bytes written), and the region made with them
 * (its segments) serves again with its attention costed anew. Valid while the room holds plans
 * of one template at one context (pm_step_plan_count forgets it when it counts a template
 * anew). */
typedef struct pm_step_decided {
    bool ready;           /* taken at ctx, for capacities in (cap_lo, cap_hi] */
    int64_t ctx;
    double cap_lo, cap_hi;
    int n_bytes;          /* the bytes Algorithm 1 read: each MLP class's layer, the tail's, */
    double bytes[3 * PM_TEMPLATE_MAX + 2]; /* each attention class's */
    unsigned sig;         /* the region's signature of them */
    bool pf[2][2][PM_TEMPLATE_MAX], lead[2][2][2][PM_TEMPLATE_MAX], pft[PM_TEMPLATE_MAX];
    bool summed;          /* sum holds PRESERVE's traffic with these decisions at ctx */
    pm_traffic sum;
    /* sum's terms in its order (traffic_prefetched's), each a node's traffic in the room or
     * an attention's in at (copied in at each point), and its count of nodes: a later point
     * sums them again in the fields that read the hardware; at most 4 a node of the two layer
     * templates (two attention classes, served or prefetched) and 1 a tail node */
    int n_terms;
    const pm_traffic *term[9 * PM_TEMPLATE_MAX];
    double weight[9 * PM_TEMPLATE_MAX];
    pm_step_traffic at[2];
    bool region_ok;       /* region holds the plan's region made with these decisions: its
                             segments point at the room's nodes, whose costs a later point
                             refreshes in place */
    pm_step_region region;
} pm_step_decided;

typedef struct pm_step_plan {
    const pm_scenario *s;
    pm_cost_ctx cost;     /* the scenario's roofline terms */
    int64_t ctx0;
    int layers;
    double cap;           /* the insertion capacity */
    bool prefetching;     /* costs of the prefetched variants are present */
    pm_ar_model ar, ar_fused;
    pm_template tmpl;
    const pm_template *from; /* the compiled template tmpl is a copy of, its nodes as they are
                                there (pm_step_plan_build_from); NULL: none (built here, or a
                                room not yet used: callers of build_from clear it first) */
    pm_step_node layer[PM_TEMPLATE_MAX], tail[PM_TEMPLATE_MAX];
    double head_s;        /* the nodes before the layers, in sequence */
    pm_op_cost head_cost[PM_TEMPLATE_MAX]; /* their costs (pm_step_plan_count reads them) */
    pm_traffic head_tr;   /* what the nodes before the layers move (once counted) */
    bool counted;         /* pm_step_plan_count filled the nodes' traffic */
    pm_traffic attn_dtr, attn_dtr_pf; /* the attention's traffic per position it reads */
    pm_traffic attn_dtr_kv, attn_dtr_kv_pf; /* the part of it from the KV bytes alone (the
                                               rest comes with the positions scored; the two
                                               differ in block-sparse layers) */
    pm_traffic plain_rest_tr; /* head, tail and every layer's nodes but the attention, nothing
                                 prefetched */
    /* once counted, each node's traffic is in tmpl.counts */
    double layer_rest_s;  /* a layer's nodes but the attention, in sequence */
    double tail_s;        /* the nodes after the layers, from HBM */
    int attn, first_comm; /* layer indices, -1 when absent; first_comm: the dense layer's
                             first communication after the attention (where its periods start) */
    int moe_first_comm;   /* the MoE layer's (its dispatch under data-parallel attention, where a
                             dense layer's is the all-gather after norm2; else first_comm) */
    int pre_comm;         /* a collective before the attention (sequence parallelism's
                             all-gather; step_plan.c's header), -1 when none */
    int chunks;           /* fused: chunks of the first fused node */
    double attn_dflop, attn_dkv; /* attention per unit of context (decode) */
    /* Layer classes: [0] global, [1] local (windowed). The template's layer is global. Each
     * class's attention node at ctx0, its costs and (once counted) its traffic are kept here
     * ([0] a copy of the template layer's): evaluations at other contexts start from them, and
     * a fused plan, which holds no layer nodes, has them. */
    pm_node attn_node[2];
    pm_step_node attn_cost[2];
    pm_step_traffic attn_tr[2];
    int n_class[2];       /* layers 1..L-1 of each class (the periods) */
    int all_class[2];     /* all L layers of each class */
    int class0;           /* layer 0's class */
    /* MLP classes: [0] dense (tmpl.layer, layer[]), [1] MoE (tmpl.moe, moe[]); their nodes
     * before the first communication (the attention part) are the same. */
    pm_step_node moe[PM_TEMPLATE_MAX];
    double moe_rest_s;    /* a MoE layer's nodes but the attention, in sequence */
    int all_mlp[2];       /* all L layers of each MLP class */
    int all_cm[2][2];     /* all L layers of each [attention class][MLP class] */
    /* periods: [MLP class of layer l][attention class of layer l + 1][MLP class of l + 1] */
    int n_pair[2][2][2];
    int mlp0, mlp_last;   /* the MLP classes of the first and the last layer */
    pm_step_decided decided; /* PRESERVE's decisions kept from one hardware point to the next
                                (pm_step_plan_modes) */
} pm_step_plan;

/* The plan of step (its context is the plan's ctx0). */
pm_status pm_step_plan_build(const pm_scenario *s, const pm_step *step, bool fused,
                             bool prefetching, pm_step_plan *p, pm_error *err);
/* The same with the roofline terms and allreduce models of like (a plan built for the same
 * scenario, e.g. the other phase's, or for a copy that differs only in its batch; NULL:
 * computed). */
pm_status pm_step_plan_build_like(const pm_scenario *s, const pm_step_plan *like,
                                  const pm_step *step, bool fused, bool prefetching,
                                  pm_step_plan *p, pm_error *err);
/* pm_step_plan_build_like of a plan whose template is kept and costed again at other hardware
 * points (a compiled point's, pm_step_plan_build_from): its rows keep their nodes' costs at
 * this point (pm_cost_row.kept). A plan built otherwise keeps none (it is costed once). */
pm_status pm_step_plan_compile(const pm_scenario *s, const pm_step_plan *like,
                               const pm_step *step, bool prefetching, pm_step_plan *p,
                               pm_error *err);
/* ---- the scenario's check (check.c) ---- */

/* The part of pm_scenario_check that reads the hardware a compiled point may change (the
 * accelerator's peaks, L2 capacity and bandwidth, HBM bandwidth, the cluster's links: the
 * accelerator and the cluster alone, the magnitudes, the compute datatype's peak), in
 * pm_scenario_check's order: for a scenario that differs from one that passed
 * pm_scenario_check only in those fields, its refusal is pm_scenario_check's. */
pm_status pm_scenario_check_hardware(const pm_scenario *s, pm_error *err);
/* The part of pm_scenario_check_hardware that reads the L2 capacity: for a scenario that differs
 * from one that passed pm_scenario_check_hardware (or pm_scenario_check) only in that capacity,
 * its refusal is theirs. */
pm_status pm_scenario_check_l2(const pm_scenario *s, pm_error *err);

/* ---- a best at a chip over the reticle, or with free bandwidth (sweep.c) ---- */

/* Whether mode's best, at the point values[0..n_axes) (SI) of axes of kinds, is a chip with a
 * die over the reticle: the warning that says so into note (n bytes, may be NULL), the one
 * text of it (the search's, the optimum's, the co-design's). */
bool pm_best_over_reticle(const pm_scenario *s, pm_mode mode, const pm_axis_kind *kinds,
                          const double *values, int n_axes, char *note, size_t n);
/* Whether mode's best, at the point values[0..n_axes) (SI) of axes of kinds, has more bandwidth
 * than s's chip along a bandwidth axis (hbm_bw, l2_bw, link_bw: they move no die area and no
 * price, so a per-mm2 or per-dollar objective grows along them for free): the warning that
 * says so into note (n bytes, may be NULL), the one text of it (the search's, the optimum's,
 * the co-design's). The first such axis is named. */
bool pm_best_free_bandwidth(const pm_scenario *s, pm_mode mode, const pm_axis_kind *kinds,
                            const double *values, int n_axes, char *note, size_t n);

/* ---- the search (search.c) ---- */

/* The i-th warning of a search over hardware axes axes[0..n_hw) of s whose best in mode m is at
 * best_hw[m] (SI, NULL: none found): pm_search_warning's (a mix's too): the axes' own
 * (pm_sweep_axes_warning), then each mode's best at a die over the reticle, then, per mm2 or
 * per dollar (objective), each mode's best with more bandwidth than the chip's
 * (pm_best_free_bandwidth). */
bool pm_search_chip_warning(const pm_scenario *s, const pm_axis *axes, int n_hw,
                            pm_search_objective objective,
                            const double *const best_hw[PM_MODE_COUNT], size_t i, char *note,
                            size_t n);

/* The i-th of candidate c's warnings of an uneven split (from 0; pm_search_warning's rule,
 * a mix's too): its replica's, prefill pool's or decode pool's TP (with its EP ranks) over
 * which s's model does not split evenly, the busiest device's share modelled. label opens the
 * text (the mode, and a mix's member). Writes note (may be NULL) and returns true; false past
 * the last. */
bool pm_search_uneven_warning(const pm_scenario *s, const char *label,
                              const pm_search_candidate *c, size_t i, char *note, size_t n);

/* The Pareto front of c[0..n) in place (search.c's rule: ordered by falling tokens/s per
 * user, ties by falling objective, then the space's order, each point kept when its objective
 * beats every point before it), returned in rising tokens/s per user; its count. */
size_t pm_search_pareto(pm_search_candidate *c, size_t n);

/* ---- serve.c: a served point compiled (issue 46 item 3) */
#define PM_SERVE_STEP_KINDS (PM_MAX_LENGTH_CLASSES + 2)
/* A closed-loop served point compiled: the templates of its kinds of step (what does not
 * depend on the hardware: the nodes, their flops, bytes and messages) and what serve.c keeps
 * beside them (the step rule's counts, one sequence's footprint, its plans' room), to serve it
 * again at other hardware points. Zero it before the first use; release it with
 * pm_serve_compiled_release. */
typedef struct pm_serve_compiled {
    bool ready;                             /* every kind's template is held */
    pm_template *tmpl[PM_SERVE_STEP_KINDS]; /* per kind of step, NULL where absent */
    struct pm_serve_kept *kept;             /* serve.c's, NULL until ready */
} pm_serve_compiled;
/* pm_serve_compute of s and w through c: when c is not ready, computed as pm_serve_compute and
 * compiled into c (its closed loop; an open loop is served as pm_serve_compute); when ready
 * (compiled at a scenario and workload that differ from s and w only in the hardware: the
 * accelerator's peaks, L2 capacity and bandwidth, HBM bandwidth, the cluster's links), each
 * kind's plan is costed from its template at s's hardware, Algorithm 1's decisions taken there
 * again, s checked by the rules that read that hardware only (pm_scenario_check_hardware) and
 * the accelerator's area, price and static power kept while its fields are the same: the
 * result is pm_serve_compute's, bit for bit, refusals included (tests/test_compiled.c). */
pm_status pm_serve_compute_compiled(const pm_scenario *s, const pm_serve_workload *w,
                                    pm_serve_compiled *c, pm_serve_result *out, pm_error *err);
void pm_serve_compiled_release(pm_serve_compiled *c);
/* Whether w at chunk_budget and concurrency is a decode-first wave whose prompts need more
 * than one step (they spread into groups: not modelled; pm_serve_compute refuses it, search
 * leaves the point outside its space). */
bool pm_serve_wave_spreads(const pm_serve_workload *w, int64_t chunk_budget, double concurrency);
/* ---- serve.c: what burst.c asks of it */
/* Micro-batches in flight through the stages when `sequences` are: cluster.micro_batches, or
 * one per stage (vLLM's virtual engines), at most the whole sequences, at least 1. */
double pm_serve_micro_batches(const pm_scenario *s, double sequences);
/* Step m's time in every mode into t, as pm_serve_compute times a kind of step: under its own
 * batch (the runtime's host work counts its sequences), one of M micro-batches in flight over
 * pipeline stages (M ignored without stages). Errors of pm_mixed_step_time. */
pm_status pm_serve_step_times(const pm_scenario *s, const pm_mixed_step *m, double M,
                              double t[PM_MODE_COUNT], pm_error *err);
/* The most sequences whose cache of `positions` each (the draft's beside) fits the usable HBM
 * beside the weights, on the tightest stage, over every attention rank under data-parallel
 * attention (pm_serve_result.max_concurrency's rule, at a given length); weight_bytes (may be
 * NULL) the weights per device. */
pm_status pm_serve_max_sequences(const pm_scenario *s, int64_t positions, double *max_sequences,
                                 double *weight_bytes, pm_error *err);

/* The plan of step from its template tmpl, built (pm_template_build) for s or for a scenario
 * that differs from s only in its hardware: the accelerator's peaks, L2 and HBM, the cluster's
 * links (the builder reads none of them: a template is the step's nodes, their flops, bytes
 * and messages). The nodes are costed at s's hardware; the same plan as pm_step_plan_build_like
 * with the same fused flag, bit for bit. Where p->from is tmpl, p->tmpl holds its nodes
 * already (the plan's room served the same compiled template at the point before: what a
 * point writes into p->tmpl, the rows at another GEMM key, the counts' and fused sums' fields
 * that read the hardware, is made again before it is read) and nothing is copied; p->from
 * must be NULL or a template that is still alive. */
pm_status pm_step_plan_build_from(const pm_scenario *s, const pm_step_plan *like,
                                  const pm_step *step, const pm_template *tmpl,
                                  bool prefetching, pm_step_plan *p, pm_error *err);
/* The fused plan of the same scenario, phase and context from an unfused plan (cheaper than
 * pm_step_plan_build: only the fused nodes are costed, the others' costs and traffic are u's).
 * It holds the sums and the attention that serial evaluations read (pm_step_plan_eval, _sum,
 * _traffic with preserve false), added in the order of pm_step_plan_build's fused plan, and no
 * nodes: its template is empty. u's template keeps the fused layers (pm_template_fused). */
void pm_step_plan_fuse(pm_step_plan *u, pm_step_plan *f);
/* Compiles p's PRESERVE step with the insertion decisions at ctx into *r; with_next: with
 * r->next too (else -1). */
void pm_step_region_init(const pm_step_plan *p, int64_t ctx, bool with_next, pm_step_region *r);
/* The PRESERVE step time at ctx with r's decisions: pm_step_plan_eval's where they are the
 * decisions at ctx. */
pm_status pm_step_region_eval(pm_step_region *r, int64_t ctx, double *time_s);
/* What the PRESERVE step at ctx moves with r's decisions (of a counted plan): as
 * pm_step_plan_traffic, without Algorithm 1. */
void pm_step_region_traffic(pm_step_region *r, int64_t ctx, pm_traffic *out);

/* Time of one step at ctx (decode; prefill only at ctx0) in serial/fused (preserve false) or
 * PRESERVE. signature (may be NULL) changes when the insertion decisions change. */
pm_status pm_step_plan_eval(const pm_step_plan *p, bool preserve, int64_t ctx, double *time_s,
                            unsigned *signature);
/* pm_step_plan_eval with its failures said in err: a time that is not finite and positive
 * (PM_ERR_RANGE) or a schedule that cannot finish. */
pm_status pm_step_plan_time(const pm_step_plan *p, bool preserve, int64_t ctx, double *time_s,
                            pm_error *err);
/* The insertion decisions' signature alone (cheap: no costs, no schedule). next (may be NULL)
 * receives about where they change next (within a few contexts of the first context after ctx
 * with other decisions: found from the room the decisions leave under the capacity, for plans
 * with full attention in every layer), or -1 when not found; callers check it. */
unsigned pm_step_plan_signature(const pm_step_plan *p, int64_t ctx, int64_t *next);
/* The sum of pm_step_plan_eval's step times over the contexts a..b in closed form, where a step
 * is a sum of node times (serial, fused, or PRESERVE without prefetches) and each class's
 * attention reads positions that grow by one per context or not at all over a..b (the caller
 * splits at a window and at chunk ends): into *sum, returning true; false (nothing written)
 * where it does not apply. Within PM_CLOSED_FORM_REL_TOL of adding the steps one by one. */
bool pm_step_plan_sum(const pm_step_plan *p, bool preserve, int64_t a, int64_t b, double *sum);
/* Fills what each node of the plan moves (pm_step_plan_build leaves it out: the time path does
 * not need it); a fused plan made afterwards by pm_step_plan_fuse inherits it. */
void pm_step_plan_count(pm_step_plan *p);
/* What one step at ctx moves (as pm_step_plan_eval times it), for a counted plan: the fast
 * path's twin of pm_graph_traffic. */
void pm_step_plan_traffic(const pm_step_plan *p, bool preserve, int64_t ctx, pm_traffic *out);
/* Each mode's step time at ctx into t (pm_step_plan_time's) and, when tr (may be NULL), what it
 * moves into tr (pm_step_plan_traffic's), bit for bit: serial from p, fused from f
 * (pm_step_plan_fuse of p), PRESERVE from p with Algorithm 1's decisions taken once for its
 * time and traffic (one region), and kept in p->decided for a later hardware point of the same
 * template (p built from it again in the same room, counted). p counted when tr. Returns
 * pm_step_plan_time's failures. */
pm_status pm_step_plan_modes(pm_step_plan *p, const pm_step_plan *f, int64_t ctx,
                             double t[PM_MODE_COUNT], pm_traffic *tr, pm_error *err);
/* Where the times and traffic pm_step_plan_modes last found for p (and its fused plan) hold
 * across L2 capacities, the rest of the hardware the same (issue 46 item 3): they read the
 * capacity through two terms only, each GEMM's tiling bound (cost.c) and Algorithm 1's window
 * capacity (p->cap). False where a GEMM of p's template pays the tiling bound at p's capacity;
 * else true and (*cap_lo, *cap_hi] the window capacities that take the same decisions
 * (pm_step_decided's; every capacity where p prefetches nothing). The bound falls as the
 * capacity grows, in rounded arithmetic too (the division, the square root and the division by
 * it are monotone), so past it at one capacity a GEMM is past it at every larger one: the
 * results hold at every capacity at least p's whose window capacity is in the range. */
bool pm_step_plan_l2_hold(const pm_step_plan *p, double *cap_lo, double *cap_hi);
/* A pipeline stage of a plan whose layers are all of one class (step_plan.c): its layers, the
 * head (the first stage) and the tail (the last), and the receive of its input before them
 * (recv_s > 0: a communication node whose window PRESERVE fills with the first layer's
 * weights and KV up to its first collective, under the capacity). */
typedef struct pm_stage_part {
    int layers;
    bool head, tail;
    double recv_s;
    double recv_bytes; /* what the receive moves over the link */
    double gap_s;      /* the stage's idle before the receive ends (a pipeline bubble, >= 0):
                          PRESERVE's prefetches behind the receive may run in it; not part of
                          the stage's time */
} pm_stage_part;
/* The stage's time at ctx in one mode (the receive included, the gap not); *recv_pf_bytes
 * and *recv_pf_s (each may be NULL) receive what PRESERVE prefetches behind the receive and
 * the time those prefetches take alone on the idle HBM (a gap of recv_pf_s - recv_s or more
 * hides them whole). With every layer, the head and the tail and no receive it is
 * pm_step_plan_eval's step. */
pm_status pm_step_plan_stage_eval(const pm_step_plan *p, bool preserve, int64_t ctx,
                                  const pm_stage_part *part, double *time_s, double *recv_pf_bytes,
                                  double *recv_pf_s);
/* What the stage moves at ctx (a counted plan), as pm_step_plan_stage_eval times it; u is the
 * unfused plan of the same step (p itself when unfused), whose tail nodes serve. */
void pm_step_plan_stage_traffic(const pm_step_plan *p, const pm_step_plan *u, bool preserve,
                                int64_t ctx, const pm_stage_part *part, pm_traffic *out);
/* One served step over the stages of pl (serve.c): its sequences in micro_batches M (may be
 * fractional: a fluid mean), each carrying tokens through every boundary and returning the ids of
 * `returned` sampled tokens to the first stage (0: none). */
typedef struct pm_pipeline_step {
    double micro_batches, tokens, returned;
} pm_pipeline_step;
/* The served step's period in one mode: stage i's time t_i for one micro-batch from plan p (a
 * micro-batch's counted plan; u its unfused one) with its receive, then max(sum_i t_i, M max_i
 * t_i), the slowest stage serving every micro-batch or one micro-batch's round trip. tr (may be
 * NULL): what the average device moves per period; recv_pf_bytes (may be NULL): the most
 * PRESERVE prefetches behind a receive. */
pm_status pm_pipeline_step_time(const pm_scenario *s, const pm_pipeline *pl,
                                const pm_pipeline_step *m, const pm_step_plan *p,
                                const pm_step_plan *u, bool preserve, int64_t ctx,
                                double *time_s, pm_traffic *tr, double *recv_pf_bytes);

/* ---- estimates (estimate.c) ---- */

/* What pm_estimate_compute builds before it evaluates (the decode plans, the accelerator's
 * per-device figures), kept between calls: pm_estimate_compute_cached reuses what the scenario
 * it is given shares with the previous one (the decode plans when only the sequence length
 * differs, the accelerator's figures when the accelerator is the same), with the same results
 * to the last bit as pm_estimate_compute. One cache per thread. */
typedef struct pm_estimate_cache pm_estimate_cache;
/* A new, empty cache; NULL when out of memory. */
pm_estimate_cache *pm_estimate_cache_new(void);
void pm_estimate_cache_free(pm_estimate_cache *c);
/* How many times c built the decode plans and the accelerator's figures (what the tests check
 * a sweep reuses). */
void pm_estimate_cache_builds(const pm_estimate_cache *c, int *decode, int *accel);
/* pm_estimate_compute through cache c (not NULL; s and out not NULL). */
pm_status pm_estimate_compute_cached(const pm_scenario *s, pm_estimate_cache *c,
                                     pm_estimate *out, pm_error *err);

/* ---- energy (energy.c) ---- */
/* Whether any energy coefficient is above 0 (an energy block of zeros is refused). */
bool pm_energy_any(const pm_energy_params *e);

/* Adds weight x what node n moves, with cost c (its pm_op_cost as scheduled), to acc: the one
 * counting rule of both paths. ar and ar_fused are the scenario's allreduce models. */
void pm_node_traffic(const pm_scenario *s, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                     const pm_node *n, const pm_op_cost *c, double weight, pm_traffic *acc);
/* pm_node_traffic in two parts: what reads the hardware (HBM bytes, from c; link bytes, by the
 * collective's algorithm and a fused node's chunks) and what reads the node alone (L2 bytes
 * written by a prefetch and read back, MACs). Each adds to its own fields of acc. */
void pm_node_traffic_hw(const pm_scenario *s, const pm_ar_model *ar, const pm_ar_model *ar_fused,
                        const pm_node *n, const pm_op_cost *c, double weight, pm_traffic *acc);
void pm_node_traffic_fixed(const pm_node *n, double weight, pm_traffic *acc);
/* acc += weight x t. */
void pm_traffic_add(pm_traffic *acc, const pm_traffic *t, double weight);
/* pm_static_power_at's figure where a's energy block has passed its checks (the same block
 * bit for bit: they read nothing else): static_W plus the leakage over area (read only where
 * leakage_W_per_mm2 > 0, and then not NULL), the same sum. */
double pm_static_power_of(const pm_accelerator *a, const pm_area *area);
/* pm_static_power with a's die area already found (pm_area_compute of a; NULL: found here
 * when the leakage needs it): the same power and refusals. */
pm_status pm_static_power_at(const pm_accelerator *a, const pm_area *area, double *power_W,
                             pm_error *err);
/* pm_energy_compute with the static power p_static_W already found (pm_static_power) and
 * time_s checked. */
void pm_energy_of(const pm_accelerator *a, double p_static_W, const pm_traffic *t, double time_s,
                  pm_energy *out);

/* ---- disaggregated pools (disagg.c) ---- */

/* pm_disagg_compute's checks of a workload alone (lengths, counts, load, limits, link): PM_OK or
 * PM_ERR_INVALID_ARG naming the field. search.c refuses a space whose disaggregated workload
 * it would fail. */
pm_status pm_disagg_workload_check(const pm_disagg_workload *w, pm_error *err);

/* ---- an axis's own rules, for the optimum search (sweep.c) ---- */

/* The fields pm_scenario_set_axis(., k, .) writes, copied from `from` into s: a scenario
 * whose axis k was set is `from` again in them (search.c's points of one deployment). */
void pm_scenario_axis_copy(pm_scenario *s, const pm_scenario *from, pm_axis_kind k);

/* The largest value a count axis takes (pp, dp, split ...). */
double pm_axis_count_max(pm_axis_kind k);
/* The axis's default sweep range, in SI. */
void pm_axis_default_range(pm_axis_kind k, double *lo, double *hi);
/* One value of axis k as the axis reads it (bare in its display unit, or with a unit); spec is
 * the text errors quote. */
pm_status pm_axis_value_parse(const char *text, pm_axis_kind k, const char *spec, double *out,
                              pm_error *err);

/* ---- the optimum search (optimum.c) ---- */

/* An objective of x > 0; NaN means the evaluation failed (the search stops). */
typedef double (*pm_objective_fn)(double x, void *user);
typedef struct pm_maximum {
    double best_x, best_f; /* the best point found and its value */
    double lo, hi;         /* the final bracket */
    int iterations;        /* Brent iterations */
    int evaluations;       /* objective evaluations, grid included */
    int edge;              /* -1 / +1: the best grid point is lo / hi and strictly better than
                              its neighbour (the maximum may lie beyond); 0: inside, or flat */
} pm_maximum;
/* Maximises f over [lo, hi] (0 < lo < hi): a grid of grid_points log-spaced points brackets the
 * best one (robust to a piecewise objective), then GSL's Brent minimiser refines it in log(x)
 * until the bracket is narrower than rel_tol or max_iter. Returns PM_OK, PM_ERR_NOMEM, or
 * PM_ERR_CANCELLED when f returned NaN. */
pm_status pm_maximize_log(pm_objective_fn f, void *user, double lo, double hi, int grid_points,
                          double rel_tol, int max_iter, pm_maximum *out);

/* The graph-based step evaluation (the reference the fast path is tested against). */
pm_status pm_step_time_graph(const pm_scenario *s, pm_mode mode, pm_phase phase, int64_t ctx,
                             double *time_s, int *signature, pm_error *err);
/* The same for any step (a mixed one included). */
pm_status pm_step_time_graph_step(const pm_scenario *s, pm_mode mode, const pm_step *step,
                                  double *time_s, int *signature, pm_error *err);

/* ---- text (text.c) ---------------------------------------------------------------------- */
/* A growing NUL-terminated string; zero-initialised it is empty. After an allocation failure
 * (failed) appends do nothing; the writer checks failed once and frees p either way on error. */
typedef struct pm_sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} pm_sbuf;
/* Appends printf-formatted text. */
void pm_sb_printf(pm_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends s as a JSON string literal, quotes included, escaping '"', '\\' and control bytes. */
void pm_sb_json_string(pm_sbuf *b, const char *s);

/* ---- allocation (alloc.c) -------------------------------------------------------------- */
/* Every allocation of the library goes through these, so that tests can inject failures. The
 * blocks are malloc blocks (free() releases them). pm_realloc leaves p intact on failure. */
void *pm_malloc(size_t size);
void *pm_calloc(size_t count, size_t size);
void *pm_realloc(void *p, size_t size);
char *pm_strdup(const char *s);
void pm_free(void *p);
/* Test hook: the n-th allocation from now on (n >= 1; 0 acts as 1) fails, and every one after
 * it, on the calling thread only; n < 0 turns injection off. */
void pm_alloc_fail_after(long n);
/* Test hook: only the n-th allocation from now on fails; the ones after it succeed again (finds
 * callers that drop a failure and carry on). n < 0 turns injection off. */
void pm_alloc_fail_once(long n);
/* Allocations attempted on the calling thread so far, failed ones included. */
long pm_alloc_count(void);
/* ---- end of allocation ------------------------------------------------------------------ */

#endif
