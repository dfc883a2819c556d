/*
 * preserve_model.h - the whole public API of libpreserve_model.
 *
 * An analytical performance and cost model of tensor-parallel LLM inference built around
 * PRESERVE (arXiv 2501.08192): prefetching weights and the KV cache from HBM into L2 while the
 * devices wait on an allreduce.
 *
 * Conventions
 *  - Every quantity is a double in SI base units, and its name says which: _s, _bytes, _flop,
 *    _flop_per_s, _bytes_per_s, _mm2, _frac, _J, _W, _usd (energy, power and dollars).
 *  - Every fallible function returns a pm_status and fills an optional (NULL allowed) caller-owned
 *    pm_error. The library never prints, exits or aborts, and keeps no global mutable state: calls
 *    on different objects may run in parallel threads.
 *  - Ownership is stated per function, with one naming convention (GSL's): pm_X_free frees an
 *    object the library allocated (pm_graph_alloc, pm_step_model_new, pm_data_list's array) and
 *    the object itself; pm_X_release frees what the library attached to a caller-owned struct
 *    (pm_scenario_load's provenance, a schedule's slots, an axis's values) and leaves the struct
 *    to its owner. Both accept NULL.
 */
#ifndef PRESERVE_MODEL_H
#define PRESERVE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preserve_model_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PM_BUILDING_LIBRARY) && defined(__GNUC__)
#define PM_API __attribute__((visibility("default")))
#else
#define PM_API
#endif

/* ------------------------------------------------------------------------------------------ */
/* Status and errors                                                                           */
/* ------------------------------------------------------------------------------------------ */

/** Result of every fallible call. The numeric values are pinned and never renumbered. */
typedef enum pm_status {
    PM_OK = 0,                /* success */
    PM_ERR_NOMEM = 1,         /* an allocation failed */
    PM_ERR_IO = 2,            /* a file could not be opened or read */
    PM_ERR_SYNTAX = 3,        /* the JSON text is malformed (line and column are reported) */
    PM_ERR_TYPE = 4,          /* a value has the wrong JSON type */
    PM_ERR_MISSING = 5,       /* a required key is absent */
    PM_ERR_UNKNOWN_KEY = 6,   /* a key that the format does not define */
    PM_ERR_DUPLICATE_KEY = 7, /* the same key twice in one object */
    PM_ERR_RANGE = 8,         /* a number out of range, non-finite, or not an integer */
    PM_ERR_INCONSISTENT = 9,  /* values valid alone but not together (heads vs devices) */
    PM_ERR_NOT_FOUND = 10,    /* a named bundled file does not exist */
    PM_ERR_INVALID_ARG = 11,  /* API misuse: NULL where not allowed, bad enum */
    PM_ERR_UNIT = 12,         /* unknown unit suffix, or a unit of the wrong dimension */
    PM_ERR_UNSUPPORTED = 13,  /* the accelerator lacks the datatype, or similar */
    PM_ERR_VALUE = 14,        /* a string value not among the allowed ones */
    PM_ERR_CANCELLED = 15     /* a callback asked to stop (pm_sweep_run) */
} pm_status;

/** The file an error names when no file caused it: PM_ERROR_FILE_OVERRIDE " KEY=VALUE" (the
 * override that did, "override workload.batch=0"; the bare word for an override that is not
 * KEY=VALUE), PM_ERROR_FILE_AXIS for an axis specification (pm_axis_parse). A front end that
 * takes these from options of its own may name the option instead (the tool writes "--set
 * KEY=VALUE" and "--sweep"). The library's messages speak of keys, never of a front end's
 * options. */
#define PM_ERROR_FILE_OVERRIDE "override"
#define PM_ERROR_FILE_AXIS "axis"

/** Where and what went wrong. Caller-owned, fixed buffers: filling it never allocates. */
typedef struct pm_error {
    pm_status status;
    char file[1024];   /* the file (any path the loaders take fits whole), "" when the input
                          did not come from a file, or PM_ERROR_FILE_OVERRIDE ... or
                          PM_ERROR_FILE_AXIS (above) */
    char path[256];    /* the JSON path, "$.workload.batch", or "" */
    int line, column;  /* 1-based position for syntax errors, 0 when unknown */
    char message[512]; /* what was expected and what was found */
} pm_error;

/** A short stable name for a status ("PM_ERR_RANGE"). Never NULL. */
PM_API const char *pm_status_name(pm_status status);

/**
 * Formats an error like a compiler: "file:line:column: $.path: message" (parts that are empty
 * are left out). Writes at most size bytes including the terminating NUL; returns the length the
 * full text needs (snprintf semantics). err may not be NULL.
 */
PM_API size_t pm_error_format(const pm_error *err, char *buf, size_t size);

/** The library version ("0.1.0"), equal to PM_VERSION_STRING of the header it was built with. */
PM_API const char *pm_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Inputs                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** Numeric datatypes of weights, KV cache and activations. */
typedef enum pm_dtype {
    PM_DTYPE_INT8 = 0,
    PM_DTYPE_FP8 = 1,
    PM_DTYPE_BF16 = 2,
    PM_DTYPE_FP16 = 3,
    PM_DTYPE_FP32 = 4,
    /* 4-bit integer weights (GPTQ, AWQ), weight-only beside 16-bit activations: 0.5 byte a
     * weight plus a 16-bit scale (and, with weight_zero_point, a 4-bit zero point) per group of
     * weight_group_size input channels; the embedding, the LM head and a MoE router stay in the
     * activations' type. Refused as activations, KV cache or allreduce payload. Appended last
     * so the earlier values keep their numbers. */
    PM_DTYPE_INT4 = 5,
    PM_DTYPE_COUNT = 6
} pm_dtype;

/** Bytes per element of dtype (1, 1, 2, 2, 4, 0.5: int4 without its group scales); 0 for an
 * invalid value. */
PM_API double pm_dtype_bytes(pm_dtype dtype);
/** "int8", "fp8", "bf16", "fp16", "fp32", "int4"; "?" for an invalid value. */
PM_API const char *pm_dtype_name(pm_dtype dtype);

/** A decoder-only transformer (HuggingFace config.json semantics). */
typedef struct pm_model {
    char name[64];
    int layers;          /* num_hidden_layers, >= 1 */
    int hidden;          /* hidden_size, >= 1 */
    int heads;           /* num_attention_heads, >= 1 */
    int kv_heads;        /* num_key_value_heads, >= 1, divides heads */
    int head_dim;        /* >= 1 */
    int intermediate;    /* MLP width per matrix, >= 1 */
    int vocab;           /* vocab_size, >= 1 */
    bool gated_mlp;      /* gate, up and down matrices (SwiGLU) rather than up and down */
    bool tied_embeddings;
    /* Zero-initialised, the fields below describe a Llama-style decoder (sequential attention
     * and MLP blocks, no biases, full attention in every layer, multi-head or grouped-query
     * attention): a hand-built pm_model that fills only the fields above stays valid. */
    bool parallel_block; /* attention and MLP both read the layer's input and their outputs are
                            summed: one allreduce per layer (GPT-J, Falcon parallel_attn,
                            GPT-NeoX use_parallel_residual, Cohere) */
    bool qkv_bias;       /* biases on the Q, K and V projections */
    bool o_bias;         /* a bias on the attention output projection */
    bool mlp_bias;       /* biases on the MLP projections */
    int sliding_window;  /* tokens a local (windowed) layer attends to, >= 1; 0: no local layers */
    int window_period;   /* local and global layers repeat with this period, 1..64 (0 acts as
                            1); only with sliding_window or sparse_block */
    uint64_t local_mask; /* bit i set: layer l with l % window_period == i is local; only with
                            sliding_window or sparse_block (0 acts as every layer local) */
    bool chunked_attention; /* local layers attend within fixed chunks of sliding_window
                               tokens (Llama-4's attention_chunk_size: a query sees the
                               positions of its own chunk) rather than through a window that
                               slides */
    /* Block-sparse attention (Phi-3-small's blocksparse_* keys), when sparse_block >= 1: the
     * local layers (the pattern above; sliding_window is then 0) split the positions into
     * blocks of sparse_block; a query reads its own block and the sparse_local_blocks - 1
     * before it whole and, beyond them, one block in every sparse_vert_stride: block j when
     * (j + h x step + 1) % sparse_vert_stride == 0 for query head h, step max(1,
     * sparse_vert_stride / heads) (0 with sparse_homo_head). The cache holds every position. */
    int sparse_block;        /* blocksparse_block_size, positions per block; 0: none */
    int sparse_local_blocks; /* blocksparse_num_local_blocks, >= 1 */
    int sparse_vert_stride;  /* blocksparse_vert_stride, >= 1 */
    bool sparse_homo_head;   /* blocksparse_homo_head_pattern: every head reads the same blocks */
    int max_position_embeddings; /* the context the model was trained for; 0: not given */
    int learned_positions;   /* rows of a learned absolute position embedding (GPT-2, OPT,
                                StarCoder), whole on every device; 0: none (rotary, ALiBi) */
    /* Multi-head latent attention (DeepSeek-V2/V3), when kv_lora_rank >= 1: each layer caches
     * one latent of kv_lora_rank + qk_rope_head_dim elements per position, shared by every
     * head and so replicated on every tensor-parallel rank; decode runs the absorbed form. */
    int kv_lora_rank;     /* 0: not MLA */
    int q_lora_rank;      /* the query's low-rank dimension; 0: a full-rank query projection */
    int qk_nope_head_dim; /* per head, the query/key part without position encoding */
    int qk_rope_head_dim; /* per head (and once in the latent), the part with RoPE */
    int v_head_dim;       /* per head, the value dimension */
    /* Mixture of experts, when experts >= 1 (src/moe.c): a MoE layer's MLP is a router (hidden
     * x experts, whole on every device), experts_per_token of `experts` routed experts chosen
     * per token, and shared_experts experts every token runs. Layer l is a MoE layer when
     * l >= moe_first_layer and l % moe_period == moe_phase (moe_period 0 acts as 1); the
     * others are dense with `intermediate` columns. Zero: a dense model. */
    int experts;              /* routed experts per MoE layer (num_local_experts, num_experts,
                                 n_routed_experts); 0: dense */
    int experts_per_token;    /* top-k (num_experts_per_tok), 1..experts */
    int expert_intermediate;  /* one routed expert's MLP width per matrix */
    int shared_experts;       /* experts every token runs (n_shared_experts), >= 0 */
    int shared_intermediate;  /* one shared expert's MLP width per matrix */
    int moe_first_layer;      /* layers before it are dense (first_k_dense_replace) */
    int moe_period;           /* MoE every moe_period-th layer (moe_layer_freq,
                                 decoder_sparse_step, interleave_moe_layer_step); 0 acts as 1 */
    int moe_phase;            /* which layer of the period is MoE, 0..moe_period - 1 */
    /* The checkpoint's weight format where a HuggingFace config states one (its
     * quantization_config). It describes the published files, not the run: the workload's
     * weight_dtype is what is modelled, and pm_scenario_warning says when the two differ. */
    char quant_method[32]; /* quantization_config.quant_method ("fp8", "awq", "mxfp4"); "": none */
    double quant_bits;     /* bits per stored weight the method states (4, 8); 0: not stated, or
                              mixed across the config's groups */
    bool quant_float;      /* those weights are floating point (fp8, fp4), not integers */
    int quant_group_size;  /* input channels a scale covers, as the method states it (gptq's,
                              awq's and mlx's group_size; -1: a whole input row, gptq's per
                              channel); 0: not stated */
    int quant_zero_point;  /* 1: the integers carry a zero point (gptq's sym false, awq's
                              zero_point true); -1: symmetric, none; 0: not stated */
    /* The checkpoint's multi-token-prediction layers (num_nextn_predict_layers: DeepSeek-V3's
     * one); not run by a step, only as speculative decoding's drafter (method "mtp", which may
     * ask for at most these). 0: none. */
    int mtp_layers;
} pm_model;

/** Whether layer `layer` (0-based) of m is local: it attends through its sliding window (or
 * chunk), or block-sparsely (sparse_block). */
PM_API bool pm_model_layer_is_local(const pm_model *m, int layer);

/** Number of local (windowed or block-sparse) layers of m: 0 without either. */
PM_API int pm_model_local_layers(const pm_model *m);

/** Whether layer `layer` (0-based) of m is a mixture-of-experts layer (m->experts >= 1 and the
 * layer in the MoE pattern). */
PM_API bool pm_model_layer_is_moe(const pm_model *m, int layer);

/** Number of MoE layers of m: 0 for a dense model. */
PM_API int pm_model_moe_layers(const pm_model *m);

/** The blocks a package's I/O dies hold, beside their own other area. Values are pinned. */
typedef enum pm_io_holds {
    PM_IO_LINKS = 0,           /* the link PHYs (an I/O die beside the compute die: Ascend's
                                  Nimbus) */
    PM_IO_LINKS_HBM = 1,       /* and the HBM PHYs */
    PM_IO_LINKS_HBM_L2 = 2,    /* and the L2 (a base die under the compute dies: MI300X's IODs
                                  with the Infinity Cache) */
    PM_IO_HOLDS_COUNT = 3
} pm_io_holds;

/** "links", "links_and_hbm_phy", "links_hbm_phy_and_l2" (the JSON spelling); "?" when
 * invalid. */
PM_API const char *pm_io_holds_name(pm_io_holds holds);

/** Die-area coefficients of the accelerator (process node as data). All >= 0. */
typedef struct pm_area_params {
    bool present;                       /* false when the file gave no "area" object */
    double process_nm;
    double compute_mm2_per_flop_per_s;  /* per dense int8 op/s */
    double l2_mm2_per_byte;
    double l2_die_frac;                 /* the die's L2 SRAM per byte enabled (l2_on_die_frac,
                                           >= 1; 0 acts as 1): a harvested part (GA100: 48 MiB
                                           built, 40 enabled) carries its spare; an L2 sweep
                                           keeps the ratio */
    double hbm_phy_mm2_per_stack;
    int hbm_stacks;                     /* HBM PHY sites on the die, populated or not */
    double link_phy_mm2_per_link;
    int links;
    double other_mm2;                   /* the rest of the compute dies, all together */
    /* The package's dies (DESIGN.md section 9): compute_dies equal dies share the compute, the
     * other area and every block not on the I/O dies; io_dies equal I/O dies share the blocks
     * io_holds names and io_other_mm2. Each die is yielded alone and must fit the reticle. */
    int compute_dies;                   /* >= 1 (0 is read as 1) */
    int io_dies;                        /* >= 0 */
    pm_io_holds io_holds;               /* the blocks on the I/O dies (with io_dies >= 1) */
    double io_other_mm2;                /* the rest of the I/O dies, all together */
    bool compute_on_io;                 /* the compute dies are stacked on the I/O dies (MI300X's
                                           XCDs on its IODs): the I/O dies are at least the
                                           compute dies' area, what they lack of it built as
                                           their rest (pm_area.io_other_mm2) */
} pm_area_params;

/** Energy coefficients of the accelerator (the file's "energy" object, each number sourced).
 * All >= 0; the energy of a step is bytes x energy per byte at each level, MACs x energy per
 * MAC, plus static power x time (src/energy.c). */
typedef struct pm_energy_params {
    bool present;                          /* false when the file gave no "energy" object */
    double hbm_J_per_byte;                 /* an HBM read or write */
    double l2_write_J_per_byte;            /* a prefetched byte written into L2 */
    double l2_read_J_per_byte;             /* a prefetched byte read back from L2 */
    double link_J_per_byte;                /* a byte a device sends over its links */
    double mac_J[PM_DTYPE_COUNT];          /* one multiply-accumulate per datatype; given for
                                              every datatype with a peak */
    double static_W;                       /* static power independent of the die */
    double leakage_W_per_mm2;              /* static power per mm2 of modelled die (needs the
                                              "area" object) */
    double board_power_W;                  /* the part's board power, for checks; 0: unknown */
} pm_energy_params;

/** Yield models of the die-cost model. Values are pinned. */
typedef enum pm_yield_model {
    PM_YIELD_NEGATIVE_BINOMIAL = 0, /* Y = (1 + A D0 / alpha)^-alpha (ttm-cas, alpha = 3) */
    PM_YIELD_MURPHY = 1,            /* Y = ((1 - e^(-A D0)) / (A D0))^2 */
    PM_YIELD_POISSON = 2,           /* Y = e^(-A D0) */
    PM_YIELD_COUNT = 3
} pm_yield_model;

/** "negative_binomial", "murphy", "poisson" (the JSON spelling); "?" when invalid. */
PM_API const char *pm_yield_model_name(pm_yield_model model);

/** Dollar-cost coefficients of the accelerator (the file's "cost" object, each sourced). */
typedef struct pm_cost_params {
    bool present;                   /* false when the file gave no "cost" object */
    double wafer_usd;               /* > 0, foundry sale price of one wafer */
    double wafer_diameter_mm;       /* > 0, 300 for today's wafers */
    double defect_density_per_mm2;  /* >= 0, D0 */
    pm_yield_model yield_model;     /* default PM_YIELD_NEGATIVE_BINOMIAL */
    double yield_alpha;             /* > 0, the negative binomial's clustering (default 3) */
    double hbm_usd_per_byte;        /* >= 0, HBM price, times hbm_capacity_bytes */
    double package_usd;             /* >= 0, package, interposer, assembly and test */
    double io_wafer_usd;            /* > 0: the I/O dies' wafer, where they are on another
                                       node (MI300X's N6 IODs beside N5 XCDs); 0: wafer_usd */
    double io_defect_density_per_mm2; /* > 0: the I/O dies' node's D0 where it differs; 0:
                                         defect_density_per_mm2 */
} pm_cost_params;

/** How a GEMM's time depends on its shape (the accelerator's optional "gemm" object;
 * src/gemm_eff.c, docs/data-format.md). Absent (present false): the plain roofline
 * max(compute, memory), every tile count ideal (the paper's NPU). */
typedef struct pm_gemm_params {
    bool present;
    int compute_units;         /* >= 1, SMs or CUs: output tiles run in waves of this many */
    int tile_m, tile_n;        /* >= 1, the kernels' output tile (rows x columns) */
    double overlap_loss_frac;  /* [0, 1], share of the shorter of compute and memory time that
                                  does not overlap the longer (the knee between the two) */
    double latency_s;          /* >= 0, a GEMM kernel's fixed time (prologue, first loads,
                                  epilogue) */
} pm_gemm_params;

/** One accelerator (device). */
/** How a consumer uses the data its prefetch brings into L2. */
typedef enum pm_prefetch_consumer {
    PM_CONSUMER_WAIT = 0,  /* waits for its prefetch's end event, then reads L2 (the paper's
                              events; DESIGN.md section 7) */
    PM_CONSUMER_STREAM = 1 /* starts when the main stream reaches it: the lines already
                              prefetched are L2 hits, the rest arrive with the prefetch or are
                              fetched by the consumer's own misses, whichever is sooner */
} pm_prefetch_consumer;

/** "wait" or "stream" (the JSON spelling); "?" for an invalid value. */
PM_API const char *pm_prefetch_consumer_name(pm_prefetch_consumer c);

typedef struct pm_accelerator {
    char name[64];
    char platform[32];        /* the hardware family ("ascend", "nvidia-hopper"); "" not given */
    char default_cluster[64]; /* the bundled cluster it is built into; "" not given */
    double peak_flop_per_s[PM_DTYPE_COUNT]; /* dense peak per datatype; 0 = unsupported */
    double compute_efficiency_frac;         /* (0, 1] */
    /* Per datatype, where a measurement gives one (JSON "compute_efficiency_by_dtype": {"fp8_frac":
     * ...}): the sustained fraction of that datatype's peak, in (0, 1], replacing
     * compute_efficiency_frac for its GEMMs; 0: compute_efficiency_frac (H100: fp8 0.70 against
     * bf16 0.80, the MAMF searches' 0.709 and 0.803). */
    double compute_efficiency_dtype_frac[PM_DTYPE_COUNT];
    double hbm_capacity_bytes;
    double hbm_bandwidth_bytes_per_s;       /* nominal peak */
    double hbm_efficiency_frac;             /* (0, 1], contiguous bulk streams (the prefetcher) */
    double kernel_hbm_efficiency_frac;      /* [0, 1], what operators' own reads achieve
                                               (decode GEMV, attention); 0: hbm_efficiency_frac */
    double dequant_elem_per_s;              /* >= 0, weight elements the vector units convert
                                               per second in a weight-only GEMM (int8/fp8
                                               weights, wider activations); 0: free */
    double attention_hbm_efficiency_frac;   /* [0, 1], what the attention kernel's KV reads
                                               achieve; 0: kernel_hbm_efficiency_frac */
    /* [0, 1], the fraction of each datatype's peak the attention kernels' matrix products reach
     * (FlashAttention-class prefill, a compute-bound MLA decode), which run below the GEMMs'
     * efficiency (softmax between the two products, causal tiles); 0: the GEMMs'
     * (compute_efficiency_frac, or the datatype's compute_efficiency_dtype_frac). */
    double attention_compute_efficiency_frac;
    double attention_latency_s;             /* >= 0, the fixed time of a decode attention
                                               kernel beyond its roofline (split-KV reduction,
                                               ramp and tail); 0: none (the paper's NPU) */
    double l2_capacity_bytes;
    double l2_bandwidth_bytes_per_s;
    double l2_usable_frac;                  /* (0, 1], share of L2 the prefetcher may fill */
    double kv_strided_efficiency_frac;      /* (0, 1], strided KV reads vs contiguous */
    double kernel_launch_s;                 /* >= 0 */
    double chunk_half_efficiency_bytes;     /* >= 0, Hockney n_1/2 of chunked transfers */
    pm_prefetch_consumer prefetch_consumer; /* default PM_CONSUMER_WAIT */
    pm_area_params area;
    pm_energy_params energy;
    pm_cost_params cost;
    pm_gemm_params gemm;
} pm_accelerator;

/** The insertion capacity C of Algorithm 1, the "L2 prefetch window": l2_capacity_bytes x
 * l2_usable_frac. The one rule the estimate, the fast evaluator and every view use. a may not
 * be NULL. */
PM_API double pm_accelerator_l2_window_bytes(const pm_accelerator *a);

typedef enum pm_topology {
    PM_TOPO_RING = 0,
    PM_TOPO_FULL_MESH = 1,
    PM_TOPO_SWITCH = 2,
    PM_TOPO_HIERARCHICAL = 3
} pm_topology;

typedef enum pm_allreduce_algo {
    PM_AR_AUTO = 0,        /* the fastest algorithm the topology allows */
    PM_AR_RING = 1,        /* 2(p-1) steps of alpha + n/(pB) */
    PM_AR_ONESHOT = 2,     /* every device reads all peers' buffers and reduces */
    PM_AR_TWOSHOT = 3,     /* reduce-scatter then all-gather on dedicated links */
    PM_AR_TREE = 4,        /* recursive doubling: 2 ceil(log2 p) steps of alpha + n/B */
    PM_AR_HIERARCHICAL = 5, /* intra-node reduce-scatter, inter-node ring, intra all-gather */
    PM_AR_RING_PIPELINED = 6 /* alpha once + the ring's bandwidth term 2(p-1)n/(pB): the
                                PRESERVE paper's design-space model; only when named */
} pm_allreduce_algo;

/** "ring", "full_mesh", "switch", "hierarchical" (the JSON spelling); "?" when invalid. */
PM_API const char *pm_topology_name(pm_topology topology);
/** "auto", "ring", "oneshot", "twoshot", "tree", "hierarchical", "ring_pipelined"; "?" when
 * invalid. */
PM_API const char *pm_allreduce_algo_name(pm_allreduce_algo algo);

/** Pipeline stages a replica has at most (pm_cluster.pipeline_parallel). */
#define PM_MAX_STAGES 128

/** The tensor-parallel group and its interconnect, and the stages and replicas of the plan. */
typedef struct pm_cluster {
    char name[64];
    char platform[32];                    /* the family of accelerators it connects; "" not
                                             given (pm_scenario_platform_mismatch) */
    int devices;                          /* tensor-parallel degree p, >= 1 */
    pm_topology topology;
    pm_allreduce_algo algorithm;
    double link_bandwidth_bytes_per_s;    /* per link, per direction, > 0 */
    double link_latency_s;                /* start-up latency alpha per step, >= 0 */
    double allreduce_efficiency_frac;     /* (0, 1], share of the link bandwidth an allreduce's
                                             transfers reach (its bus bandwidth, nccl-tests'
                                             busbw, over the link's): every algorithm's bytes
                                             term runs at link x this; 0 acts as 1 */
    double fused_latency_s;               /* alpha of the fused GEMM+allreduce kernel's own
                                             communication (device-initiated); 0: link_latency_s */
    int devices_per_node;                 /* hierarchical only; divides devices */
    pm_topology intra_node_topology;      /* hierarchical only: how a node's devices connect
                                             (ring, full_mesh or switch; ring by default), the
                                             intra-node phases' algorithm */
    double inter_node_bandwidth_bytes_per_s;
    double inter_node_latency_s;
    /* Expert parallelism (MoE models): the routed experts split over expert_parallel ranks,
     * each expert's matrices over the devices / expert_parallel devices of its rank; attention
     * stays tensor parallel over all devices. 0 acts as 1 (tensor-parallel experts). */
    int expert_parallel;
    double a2a_latency_s;                 /* alpha of one all-to-all (dispatch or combine);
                                             0: link_latency_s (inter_node_latency_s across
                                             nodes) */
    double a2a_efficiency_frac;           /* (0, 1], share of the link bandwidth an all-to-all
                                             achieves (DeepEP's calibration); 0 acts as 1 */
    int max_devices;                      /* the most devices the interconnect joins (one
                                             NVSwitch baseboard, one full mesh: 8); more are
                                             refused; 0: no limit (a ring, a hierarchy) */
    /* Pipeline stages and data-parallel replicas (issue 44). A replica is pipeline_parallel
     * stages of `devices` (the tensor-parallel group) each; the deployment is data_parallel
     * replicas: TP x PP x DP devices in all (pm_cluster_total_devices). Placement: a stage's
     * tensor-parallel (and expert-parallel) group inside one node first, stages packed into
     * nodes in order, replicas after; a stage boundary inside a node crosses the link
     * (link_bandwidth, link_latency), one between nodes the inter-node link
     * (inter_node_bandwidth, inter_node_latency). 0 acts as 1 for both. */
    int pipeline_parallel;
    int data_parallel;
    /* The layers of each stage (JSON "pipeline_layers": [n_0, ..., n_{PP-1}], summing to the
     * model's layers), when stage_layers[0] > 0; otherwise the even split, the remainder one
     * layer each on the first stages (pm_pipeline_stage_layers). */
    int stage_layers[PM_MAX_STAGES];
    int micro_batches;                    /* micro-batches in flight through the stages (JSON
                                             "micro_batches", at most the batch); 0: min(PP,
                                             batch), vLLM's virtual engines */
    int nodes;                            /* nodes the cluster has (JSON "nodes"); a plan of
                                             more devices than nodes x devices per node is
                                             refused; 0: as many as a plan needs */
    /* Sequence parallelism inside the tensor-parallel group (issue 44, Megatron-style; JSON
     * "sequence_parallel"): each allreduce of a layer becomes a reduce-scatter (the sum, split
     * over the ranks by tokens) and an all-gather before the next column-parallel GEMM; the
     * norms run on 1/devices of the tokens (the busiest rank's ceiling). Dense decoders only:
     * pm_scenario_check refuses it with MoE layers and parallel attention/MLP blocks. */
    bool sequence_parallel;
    /* Data-parallel attention with expert-parallel MLPs (issue 44 item 3, DeepSeek-style MoE
     * serving; JSON "attention_data_parallel", CLI --dp-attention): the `devices` of the group
     * run the attention data parallel, each rank its own ceil(batch / devices) sequences and
     * their KV (all KV heads), the attention, the shared experts, the router, the embedding
     * and the LM head replicated on every rank (no allreduce); the routed experts expert
     * parallel over the same devices (expert_parallel equal to devices), the dispatch and
     * combine all-to-alls carrying each rank's own tokens (pm_alltoall_time over the group's
     * links), or tensor parallel over the group (expert_parallel 1: SGLang's default without
     * --ep; the shared experts split too), the MoE block then run as a dense layer's MLP; a
     * dense layer's MLP tensor parallel over the group on the ranks' tokens all-gathered after
     * norm2, a reduce-scatter after Down (SGLang's FULL mode). Other expert_parallel values are
     * refused at that key. A mixed step
     * (a served workload) is the busiest rank's share of it. MoE models only; refused with
     * sequence parallelism, pipeline stages and a runtime whose expert parallelism is
     * "allreduce", each naming this key. */
    bool attention_data_parallel;
} pm_cluster;

/** The pipeline stages (pipeline_parallel, or 1 when it is 0) and data-parallel replicas
 * (data_parallel, or 1) of c; c may not be NULL. */
PM_API int pm_cluster_pp(const pm_cluster *c);
PM_API int pm_cluster_dp(const pm_cluster *c);
/** Every device of the deployment: devices (TP) x pm_cluster_pp x pm_cluster_dp. The divisor of
 * every per-device figure (tokens/s per device, per mm2, per dollar). */
PM_API int pm_cluster_total_devices(const pm_cluster *c);
/** The devices of one node: devices_per_node (hierarchical), else max_devices when given (one
 * NVSwitch baseboard), else devices (the tensor-parallel group is one node). */
PM_API int pm_cluster_node_devices(const pm_cluster *c);

/** The expert-parallel degree of c: expert_parallel, or 1 when it is 0. */
PM_API int pm_cluster_ep(const pm_cluster *c);

/**
 * Time of one all-to-all (MoE dispatch or combine) in which every device holds message_bytes
 * for the ep ranks (an even share for each, its own share staying local), alpha-beta per
 * topology over r = pm_cluster_ep(c) ranks, with B = link bandwidth x a2a_efficiency_frac:
 *   ring          (r - 1) alpha + n (r - 1) / (2 B)   (shares cross (r - 1) / 2 links on average)
 *   full_mesh     alpha + n / (r B)                   (one dedicated link per peer)
 *   switch        alpha + n (r - 1) / (r B)           (one port per device)
 *   hierarchical  alpha + max(n s / (r B), n (r - q) / (r B_inter)) with q ranks per node,
 *                 s = 1 in a full_mesh node (a link per peer), q - 1 in a ring or switch node
 *                 (NVLink and the NIC carry their shares concurrently; alpha is the inter-node
 *                 one when the ranks span nodes)
 * 0 for one rank or an empty message. Returns PM_OK or PM_ERR_INVALID_ARG (NULL, a negative or
 * non-finite message).
 */
PM_API pm_status pm_alltoall_time(const pm_cluster *c, double message_bytes, double *time_s,
                                  pm_error *err);

/** What is being served. */
typedef struct pm_workload {
    int batch;             /* >= 1 */
    int64_t seq_len;       /* total sequence length (prefill + decode), >= 2 */
    double prefill_frac;   /* (0, 1): prompt share of seq_len */
    pm_dtype weight_dtype, kv_dtype, act_dtype;
    /* The allreduce payload's type, when allreduce_dtype_given (JSON "allreduce_dtype");
     * otherwise act_dtype. W8A8 GEMMs' int32 partial sums are dequantised before the
     * allreduce (they cannot be summed in int8), so W8A8 inference reduces fp16. */
    bool allreduce_dtype_given;
    pm_dtype allreduce_dtype;
    /* MoE routing skew (JSON "routing_skew_alpha"): expert i (0-based, by popularity) is chosen
     * with a weight proportional to (i + 1)^-alpha; 0 (the default) is uniform routing. The
     * experts are placed on the EP ranks in that order (rank 0 holds the most popular ones). */
    double routing_skew_alpha;
    /* Distinct sequences in the batch (JSON "distinct_sequences"), 1..batch; 0: all of them.
     * A benchmark that replicates one prompt over the batch (greedy decoding keeps the copies
     * identical) routes every copy's tokens to the same experts: a MoE step's expert reads
     * follow distinct_sequences x (tokens per sequence) independent tokens, while the GEMMs
     * still compute every token (src/moe.c). Refused with expert parallelism (the busiest
     * rank's load of identical tokens is not modelled). No effect on a dense model. */
    int distinct_sequences;
    /* int4 weights only (JSON "weight_group_size", "weight_zero_point"): the input channels
     * that share one 16-bit scale (0: 128, GPTQ's and AWQ's default group size), and whether
     * each group also stores a 4-bit zero point (asymmetric: AWQ's default; false: symmetric,
     * as GPTQ with sym=true, whose kernels read no zero points). */
    int weight_group_size;
    bool weight_zero_point;
} pm_workload;

/** The allreduce payload type of w: allreduce_dtype when given, else act_dtype. */
PM_API pm_dtype pm_allreduce_dtype(const pm_workload *w);

/** The type the GEMMs compute in: the wider of the weight and activation types (the compute
 * axis scales this type's peak). */
PM_API pm_dtype pm_compute_dtype(const pm_workload *w);

/** Bytes of one quantised weight of a linear layer (QKV, O, the MLP and the experts): the
 * weight type's size, and for int4 0.5 plus the group's scale (2 bytes) and zero point (0.5
 * byte, when weight_zero_point) over weight_group_size (128 when 0). */
PM_API double pm_weight_elem_bytes(const pm_workload *w);

/** Bytes of one weight of the embedding, the LM head and a MoE router: the activations' type
 * under int4 weights (GPTQ and AWQ leave these layers unquantised), else the weight type's. */
PM_API double pm_unquantised_weight_bytes(const pm_workload *w);

/** The bounds of the integer inputs, one home for the loaders, pm_scenario_check, the sweeps
 * and the CLI: beyond them the int fields (or the int64 token counts they multiply) could
 * overflow. */
#define PM_MAX_DEVICES 1048576        /* 2^20 devices in the tensor-parallel group */
#define PM_MAX_BATCH 16777216         /* 2^24 sequences per step */
#define PM_MAX_SEQ_LEN 4294967296LL   /* 2^32 tokens per sequence */
#define PM_MAX_LAYERS 1048576         /* 2^20 decoder layers (graph and timeline views) */
#define PM_MAX_MODEL_DIM 1073741824   /* 2^30: any model dimension (hidden size, heads, head dim,
                                         MLP width, vocabulary, window); products of them are
                                         computed in 64 bits or in double */
#define PM_MAX_EXPERTS 1024           /* routed experts per MoE layer (today's largest: 384) */
#define PM_MAX_WEIGHT_GROUP 1073741824 /* int4 weight_group_size (input channels a scale) */

/** Phase of inference a graph or a step describes. */
typedef enum pm_phase { PM_PHASE_DECODE = 0, PM_PHASE_PREFILL = 1 } pm_phase;

/** Prompt tokens per sequence: round(seq_len x prefill_frac), half away from zero. The one
 * rule every prefill cost, decode range and report uses. w may not be NULL. */
PM_API int64_t pm_workload_prompt_tokens(const pm_workload *w);

/** Generated tokens (decode steps) per sequence: seq_len - pm_workload_prompt_tokens(w). */
PM_API int64_t pm_workload_decode_steps(const pm_workload *w);

/**
 * The context length a single-step view of the workload shows by default: the last decode step
 * (seq_len - 1 cached tokens) for PM_PHASE_DECODE, the whole prompt for PM_PHASE_PREFILL.
 * These are the steps pm_estimate_compute reports as tpot_s and prefill_s.
 */
PM_API int64_t pm_default_context(const pm_workload *w, pm_phase phase);

typedef enum pm_sharding {
    PM_SHARDING_MEGATRON = 0, /* whole heads per device; KV heads replicated when p > kv_heads */
    PM_SHARDING_IDEAL = 1     /* everything divided evenly by p, fractional heads allowed */
} pm_sharding;

/** Modelling options. Zero-initialised options are the paper's defaults. */
typedef struct pm_options {
    pm_sharding sharding;
    bool hbm_sharing;   /* prefetch and main stream share HBM bandwidth when they overlap */
    int fused_chunks;   /* chunks of the fused GEMM+allreduce; 0 = best of 1..16 */
} pm_options;

/** The serving runtime (DESIGN.md section 13; data/runtimes/, docs/data-format.md "Runtime"):
 * the time an engine adds that no roofline has. Each overhead is serial with the device's work
 * (the host prepares step n + 1 after step n's outputs are back). All zero and `present` false
 * when the scenario names no runtime: the accelerator's kernel_launch_s applies and nothing is
 * added (the paper's setting). */
/** Where a runtime decodes with a PagedAttention-style kernel (pm_runtime.paged_attention):
 * one thread block per query head reading its KV head's blocks, below the FlashAttention-class
 * kernels the accelerator presets measure. */
typedef enum pm_paged_attention {
    PM_PAGED_NONE = 0,           /* "none": never (the accelerator's or the runtime's kernel) */
    PM_PAGED_ALL,                /* "all": every model (vLLM 0.2's decode) */
    PM_PAGED_FALLBACK            /* "fallback": where vLLM 0.4-0.6's attention-backend selector
                                    falls back from FlashAttention to XFormers: a model whose
                                    every layer attends through a sliding window (an interleaved
                                    window, Gemma 2's, it disables instead), or an fp8 KV cache */
} pm_paged_attention;

/** How a runtime caches a multi-head latent attention model's keys and values
 * (pm_runtime.mla_kv_cache). */
typedef enum pm_mla_kv_cache {
    PM_MLA_CACHE_LATENT = 0,     /* "latent": one latent per position, as the model computes */
    PM_MLA_CACHE_PER_HEAD        /* "per_head": expanded keys and values per head (vLLM before
                                    0.7.1): not modelled, the scenario is refused */
} pm_mla_kv_cache;

/** How a runtime runs expert parallelism inside one tensor-parallel group
 * (pm_runtime.expert_parallel). */
typedef enum pm_ep_layout {
    PM_EP_ALL_TO_ALL = 0, /* "all_to_all": tokens dispatched to their experts' ranks and combined
                             by all-to-alls, shared experts whole on every rank (the model's) */
    PM_EP_ALLREDUCE,      /* "allreduce": every rank keeps every token, runs its local experts
                             and the tensor-parallel shared experts, and one allreduce sums
                             them (vLLM without data-parallel attention): not modelled */
} pm_ep_layout;

/** Points a runtime's expert-GEMM compute table holds at most (pm_moe_gemm_curve). */
#define PM_MAX_MOE_GEMM_POINTS 16
/** Accelerators a runtime's expert-GEMM compute table names at most (pm_moe_gemm_curve). */
#define PM_MAX_MOE_GEMM_ACCELERATORS 8

/**
 * The engine's routed-expert GEMM kernel's compute efficiency by tokens per expert (issue 47;
 * JSON "moe_gemm_compute_efficiency"): points (tokens per expert, fraction of the dense GEMM's
 * compute rate), interpolated linearly in log(tokens per expert) and clamped to the first and
 * last fractions outside them; applied to the routed expert GEMMs' compute time only (their
 * reads are the accelerator's HBM efficiency), and only on the accelerators the table's evidence
 * covers (by name). n_points 0: no table.
 */
typedef struct pm_moe_gemm_curve {
    int n_points;
    double tokens_per_expert[PM_MAX_MOE_GEMM_POINTS]; /* > 0, strictly increasing */
    double compute_frac[PM_MAX_MOE_GEMM_POINTS];      /* (0, 1] */
    int n_accelerators;                               /* >= 1 with points */
    char accelerators[PM_MAX_MOE_GEMM_ACCELERATORS][64]; /* pm_accelerator.name it applies to */
} pm_moe_gemm_curve;

typedef struct pm_runtime {
    char name[64];
    bool present;                  /* the scenario named or inlined a runtime */
    double step_overhead_s;        /* host work per step: schedule, prepare inputs, sample */
    double sequence_overhead_s;    /* more host work per sequence of the batch, per step */
    double multi_device_overhead_s;/* per step when devices > 1: worker RPC (Ray) and its sync */
    double kernel_launch_s;        /* per kernel, replacing the accelerator's: CUDA graphs or
                                      eager launches */
    double allreduce_overhead_s;   /* per allreduce beyond the cluster's alpha-beta time: the
                                      collective library's own start-up, or a custom
                                      allreduce kernel's launch */
    bool allreduce_given;          /* the runtime fixes the allreduce algorithm: the loader sets
                                      the cluster's algorithm to `allreduce` */
    pm_allreduce_algo allreduce;   /* e.g. PM_AR_RING for NCCL's ring on a small message */
    double attention_hbm_efficiency_frac; /* (0, 1]: the engine's own decode-attention kernel's
                                      KV read efficiency, replacing the accelerator's; 0: the
                                      accelerator's (its presets measure FlashAttention's) */
    double moe_gemm_efficiency_frac; /* (0, 1]: the engine's routed-expert (grouped) GEMM kernel
                                      against the dense GEMM of the same shape: the routed
                                      experts' compute and memory times are divided by it;
                                      0: as a dense GEMM (1) */
    pm_moe_gemm_curve moe_gemm_compute; /* the expert GEMMs' compute efficiency by tokens per
                                      expert, on the accelerators it names (runtime.c:
                                      pm_moe_gemm_compute_frac); times moe_gemm_efficiency_frac */
    bool moe_routing_kernels;      /* the engine routes with kernels of its own (issue 47): a MoE
                                      layer then has a top-k, an align (the slots sorted by
                                      expert) and a sum node; the runtime gave moe_align_fixed */
    double moe_align_fixed_s;      /* the align kernel's time beyond its launch and its slots' */
    double moe_align_per_slot_s;   /* the align kernel's time per token slot (tokens x top-k) */
    bool fp8_activation_quant;     /* the engine quantises a linear layer's 16-bit input to fp8
                                      in a kernel of its own before each fp8 linear (issue 47:
                                      vLLM's scaled_fp8_quant); with fp8 weights and activations
                                      a quant node precedes each such MatMul */
    double hbm_usable_frac;        /* (0, 1]: the share of the HBM the engine lets weights and the
                                      KV cache take (vLLM's gpu_memory_utilization, 0.9 by
                                      default: the rest is its activations and workspace); 0:
                                      all of it */
    pm_paged_attention paged_attention; /* the models it decodes with its PagedAttention kernel */
    double paged_attention_efficiency_frac; /* (0, 1]: that kernel's KV read efficiency relative
                                      to the one the scenario uses otherwise (the runtime's
                                      attention_hbm_efficiency_frac or the accelerator's);
                                      given exactly when paged_attention is not PM_PAGED_NONE */
    pm_mla_kv_cache mla_kv_cache;  /* an MLA model's cache: the latent (the model's), or per head
                                      (pm_scenario_check refuses an MLA model then) */
    pm_ep_layout expert_parallel;  /* how its expert parallelism moves tokens: only all-to-all
                                      is modelled (pm_scenario_check refuses the others with
                                      more than one expert-parallel rank) */
    unsigned kv_dtype_mask;        /* bit d set: the engine can cache keys and values as pm_dtype
                                      d (JSON "kv_dtypes": "fp16 bf16 fp8"); 0: any.
                                      pm_scenario_check refuses another workload kv_dtype */
} pm_runtime;

typedef struct pm_provenance pm_provenance;

/* ------------------------------------------------------------------------------------------ */
/* Speculative decoding (issue 45): a draft model or MTP heads, verified k + 1 tokens a step   */
/* ------------------------------------------------------------------------------------------ */

/** Drafted tokens a verify step checks at most (pm_speculation.draft_tokens). Published
 * configurations draft 1 to 8 (EAGLE-3's trees go deeper, but their accepted length is a
 * chain's); beyond 16 the acceptance of the last positions is not measured anywhere. */
#define PM_MAX_SPEC_TOKENS 16

/** Where the drafted tokens come from. Values are pinned. */
typedef enum pm_spec_method {
    PM_SPEC_DRAFT_MODEL = 0, /* a smaller model of the same vocabulary (Leviathan et al.), on the
                                same devices and plan: k decode steps of its own per verify */
    PM_SPEC_MTP = 1,         /* multi-token-prediction heads: mtp_layers extra decoder layers of
                                the target (DeepSeek-V3), run once per drafted token with the
                                target's embedding and LM head */
    PM_SPEC_METHOD_COUNT
} pm_spec_method;

/**
 * Speculative decoding of a scenario (the scenario's "speculative" block): every decode step is
 * a verify step of draft_tokens + 1 query tokens per sequence, preceded by draft_tokens draft
 * steps. draft_tokens 0 (a zeroed struct): no speculation, every result as without the block.
 */
typedef struct pm_speculation {
    int draft_tokens;       /* k: tokens drafted per verify step, 0 .. PM_MAX_SPEC_TOKENS */
    int n_acceptance;       /* 1: one acceptance rate for every position; k: one per position */
    double acceptance[PM_MAX_SPEC_TOKENS]; /* a_i in [0, 1): the probability that drafted token
                                              i is accepted given the tokens before it were */
    pm_spec_method method;
    int mtp_layers;         /* PM_SPEC_MTP: decoder layers of the heads (>= 1) */
    pm_model draft;         /* PM_SPEC_DRAFT_MODEL: the draft model (same vocabulary) */
    char source[160];       /* where the acceptance rates come from */
} pm_speculation;

/** The expected tokens a verify step emits (Leviathan et al.): E = 1 + sum_{j=1..k} prod_{i<=j}
 * a_i, with a constant a (n_acceptance 1): (1 - a^(k+1)) / (1 - a). 1 for k = 0; NaN for NULL
 * or an acceptance out of [0, 1). */
PM_API double pm_spec_expected_tokens(const pm_speculation *sp);

/** "draft_model" or "mtp"; "?" when out of range. */
PM_API const char *pm_spec_method_name(pm_spec_method m);

/** A complete scenario: the four inputs plus options. Plain data, may be filled by hand. */
typedef struct pm_scenario {
    char name[64];
    pm_model model;
    pm_accelerator accel;
    pm_cluster cluster;
    pm_workload workload;
    pm_options options;
    pm_provenance *provenance; /* owned; NULL for scenarios built by hand */
    pm_runtime runtime;        /* the optional "runtime" key; zero: none */
    pm_speculation spec;       /* the optional "speculative" key; zero: none (issue 45) */
} pm_scenario;

/** The largest input file any loader reads (JSON data files, HuggingFace configs, graphs):
 * larger files are refused from their size, before a byte is read. The largest real input
 * (a graph of a whole 126-layer model) is a few MB. */
#define PM_MAX_INPUT_FILE_BYTES 67108864 /* 64 MiB */

/** Where a loader finds bundled files and which overrides it applies. */
typedef struct pm_load_opts {
    const char *data_dir;             /* NULL: pm_default_data_dir() */
    const char *const *overrides;     /* "dotted.path=value" strings; NULL only with
                                         n_overrides 0 (else PM_ERR_INVALID_ARG) */
    size_t n_overrides;
} pm_load_opts;

/** The kinds of input file. */
typedef enum pm_file_kind {
    PM_KIND_MODEL = 0,
    PM_KIND_ACCELERATOR = 1,
    PM_KIND_CLUSTER = 2,
    PM_KIND_WORKLOAD = 3,
    PM_KIND_SCENARIO = 4,
    PM_KIND_GRAPH = 5,
    PM_KIND_RUNTIME = 6,
    PM_KIND_LENGTHS = 7, /* a served workload's request lengths (data/lengths/) */
    PM_KIND_COUNT = 8
} pm_file_kind;

/** "model", "accelerator", "cluster", "workload", "scenario", "graph", "runtime", "lengths";
 * "?" when invalid. */
PM_API const char *pm_file_kind_name(pm_file_kind kind);

/**
 * The bundled data directory: the environment variable PRESERVE_MODEL_DATA when set and not
 * empty; else, for a library loaded from its build directory (the tool, the tests and the
 * Python module before `meson install`), the source tree's data/; else, installed, the
 * datadir beside the library's libdir (PREFIX/share/preserve-model, found relative to the
 * library file, so a moved prefix still works), or the one configured at build time.
 * Never NULL. The returned string is static or from the environment: do not free it.
 */
PM_API const char *pm_default_data_dir(void);

/**
 * The folder of the gnuplot scripts (plots/), chosen as pm_default_data_dir chooses the data:
 * PRESERVE_MODEL_PLOTS when set and not empty, else the source tree's plots/ from a build tree,
 * else the installed datadir's plots/. Never NULL; do not free it.
 */
PM_API const char *pm_default_plots_dir(void);

/**
 * Loads a scenario. ref is a path to a file (contains '/' or ends in ".json" and exists) or the
 * name of a bundled scenario (data/scenarios/<ref>.json); "llama70b.json" that does not exist
 * in the working directory resolves to the bundled "llama70b". Component names inside resolve
 * the same way under data/models, data/accelerators, data/clusters, data/workloads. Overrides
 * are applied after names are resolved and before validation.
 *
 * out is overwritten; on success the caller frees it with pm_scenario_release. On failure out holds
 * nothing to free. opts and err may be NULL. An error of the final check (pm_scenario_check)
 * names, as its file, where the value at its path came from: the component file, or "override
 * KEY=VALUE" (PM_ERROR_FILE_OVERRIDE) for an override; the scenario's file when no one value is
 * to blame.
 * Returns PM_OK or any PM_ERR_* of a loader (IO, SYNTAX, TYPE, MISSING, UNKNOWN_KEY,
 * DUPLICATE_KEY, RANGE, INCONSISTENT, NOT_FOUND, UNIT, UNSUPPORTED, VALUE, NOMEM).
 */
PM_API pm_status pm_scenario_load(const char *ref, const pm_load_opts *opts, pm_scenario *out,
                                  pm_error *err);

/** Frees what pm_scenario_load attached to s (its provenance), not s itself: s stays usable as
 * plain data without provenance. s may be NULL. */
PM_API void pm_scenario_release(pm_scenario *s);

/**
 * Whether s's cluster belongs to another platform than its accelerator (both name a "platform"
 * and the names differ), as when `--accelerator h100-sxm` keeps a scenario's Ascend HCCS
 * cluster: the estimate is then of hardware that does not exist. When it does and note is not
 * NULL, writes (at most n bytes, NUL included) a line naming both platforms and the
 * accelerator's default_cluster ("set cluster=NAME" to use it). False when either names no
 * platform or s is NULL. Front ends warn with it; the model itself computes either way.
 */
PM_API bool pm_scenario_platform_mismatch(const pm_scenario *s, char *note, size_t n);

/**
 * The i-th (from 0) of the warnings every front end gives about s: the model computes either
 * way, but the estimate may not be of what the user meant. In order: the platform mismatch
 * above; a sequence beyond the model's max_position_embeddings; a checkpoint whose
 * quantization_config states a weight format other than the workload's weight_dtype (or one
 * below 8 bits, which is not modelled); a model whose heads or MLP do not split evenly over the
 * devices (pm_shard.uneven: the busiest device is modelled); and each HuggingFace key that was
 * not recognised (assumed not to change cost). Writes the i-th as one line (at most n bytes, NUL
 * included; nothing when note is NULL) and returns true, or returns false when there are at most i
 * warnings or s is NULL. Enumerate with `for (i = 0; pm_scenario_warning(s, i, buf, n); i++)`.
 */
PM_API bool pm_scenario_warning(const pm_scenario *s, size_t i, char *note, size_t n);

/**
 * The factor s's runtime puts on the decode-attention kernel's KV read efficiency where it
 * decodes s's model with its PagedAttention kernel (pm_runtime.paged_attention: every model, or
 * the fall-backs: a sliding window in every layer, not chunked, or an fp8 KV cache): its
 * paged_attention_efficiency_frac; 1 where it does not (no runtime, PM_PAGED_NONE, another
 * model) or s is NULL. The roofline applies it (both evaluation paths); front ends report it.
 */
PM_API double pm_scenario_paged_attention_frac(const pm_scenario *s);

/**
 * Where a runtime with paged_attention PM_PAGED_FALLBACK decodes s with its PagedAttention
 * kernel, why (whatever s's runtime is): a static string, "a sliding window in every layer" or
 * "an fp8 KV cache"; NULL when neither holds or s is NULL.
 */
PM_API const char *pm_scenario_attention_fallback(const pm_scenario *s);

/**
 * Whether s's runtime (paged_attention PM_PAGED_FALLBACK) decodes s's block-sparse layers with
 * its PagedAttention kernel while the model's other layers keep its own kernel (vLLM's
 * BlocksparseFlashAttention backend): their attention nodes are kv_paged, their KV reads at
 * paged_attention_efficiency_frac. False when the whole model falls back (then
 * pm_scenario_paged_attention_frac applies to every layer) or s is NULL.
 */
PM_API bool pm_scenario_paged_layer(const pm_scenario *s);

/**
 * Checks a scenario built by hand (or modified after loading) for ranges and consistency:
 * heads vs devices under the sharding, datatypes the accelerator supports, hierarchical
 * parameters. Returns PM_OK, PM_ERR_RANGE, PM_ERR_INCONSISTENT, PM_ERR_UNSUPPORTED or
 * PM_ERR_INVALID_ARG (s NULL). err may be NULL.
 */
PM_API pm_status pm_scenario_check(const pm_scenario *s, pm_error *err);

/** Loaders for one component. Same resolution, overrides and errors as pm_scenario_load. */
PM_API pm_status pm_model_load(const char *ref, const pm_load_opts *opts, pm_model *out,
                               pm_error *err);
/** The accelerator of ref (data/accelerators/); as pm_model_load. */
PM_API pm_status pm_accelerator_load(const char *ref, const pm_load_opts *opts,
                                     pm_accelerator *out, pm_error *err);
/** The cluster of ref (data/clusters/); as pm_model_load. */
PM_API pm_status pm_cluster_load(const char *ref, const pm_load_opts *opts, pm_cluster *out,
                                 pm_error *err);
/** The workload of ref (data/workloads/); as pm_model_load. */
PM_API pm_status pm_workload_load(const char *ref, const pm_load_opts *opts, pm_workload *out,
                                  pm_error *err);

/**
 * Validates one file of any kind (told by its "kind" key, or a HuggingFace config.json).
 * kind_out (may be NULL) receives the kind when it could be told. Returns PM_OK or the first
 * error found.
 */
PM_API pm_status pm_file_validate(const char *path, const pm_load_opts *opts,
                                  pm_file_kind *kind_out, pm_error *err);

/** One resolved input: where it came from and its value in SI units. */
typedef struct pm_param_info {
    const char *path;    /* "$.accelerator.hbm_bandwidth_TBps" */
    const char *file;    /* the file it was read from, or "override KEY=VALUE" (the override
                            that gave it, PM_ERROR_FILE_OVERRIDE) */
    double value_si;     /* converted value */
    const char *unit_si; /* "bytes/s", "bytes", "s", "flop/s", "mm2", "1" */
    const char *source;  /* the per-number source, else the file's source, else "" */
    const char *origin;  /* "given" (written in the file or an override), "defaulted" (absent: the
                            format's default), "derived" (computed from other values, e.g. the
                            head dim from hidden_size / num_attention_heads) or "ignored" (a
                            HuggingFace key read and known not to change cost, or not
                            recognised; value_si is NaN when it is not a number) */
    const char *value_text; /* a choice's name ("fp16", "ring"; value_si is NaN and unit_si
                               "") for the inputs chosen by name, else NULL. A true/false input
                               is the number 1 or 0 */
} pm_param_info;

/** Number of resolved numeric inputs recorded by pm_scenario_load (0 when none). */
PM_API size_t pm_scenario_param_count(const pm_scenario *s);
/** The i-th resolved input, or NULL when out of range. Valid until pm_scenario_release. */
PM_API const pm_param_info *pm_scenario_param(const pm_scenario *s, size_t i);

/**
 * Lists the names of the bundled files of one kind (file stems under data/<kind>s/), sorted.
 * On success *names_out is an array of *count_out strings; free it with pm_names_free.
 * Returns PM_OK, PM_ERR_IO (directory unreadable), PM_ERR_NOMEM or PM_ERR_INVALID_ARG.
 */
PM_API pm_status pm_data_list(const char *data_dir, pm_file_kind kind, char ***names_out,
                              size_t *count_out, pm_error *err);
/** Frees the array of pm_data_list and its count strings. names may be NULL. */
PM_API void pm_names_free(char **names, size_t count);

/* ------------------------------------------------------------------------------------------ */
/* Units                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/** Physical dimensions a unit suffix can have. */
typedef enum pm_dimension {
    PM_DIM_NONE = 0,      /* dimensionless count or fraction */
    PM_DIM_BYTES = 1,
    PM_DIM_BANDWIDTH = 2, /* bytes/s */
    PM_DIM_TIME = 3,
    PM_DIM_COMPUTE = 4,   /* flop/s */
    PM_DIM_AREA = 5,      /* mm2 */
    PM_DIM_AREA_PER_COMPUTE = 6, /* mm2 per flop/s */
    PM_DIM_AREA_PER_BYTE = 7,
    PM_DIM_AREA_PER_ITEM = 8,    /* mm2 per stack, per link */
    PM_DIM_LENGTH = 9,    /* nm (kept in nm) */
    PM_DIM_FRACTION = 10,
    PM_DIM_ENERGY = 11,          /* J (pJ, nJ, J): energy per operation */
    PM_DIM_ENERGY_PER_BYTE = 12, /* J/byte (pJ_per_bit, pJ_per_byte) */
    PM_DIM_POWER = 13,           /* W */
    PM_DIM_POWER_PER_AREA = 14,  /* W/mm2 */
    PM_DIM_MONEY = 15,           /* usd */
    PM_DIM_MONEY_PER_BYTE = 16,  /* usd/byte (usd_per_GB, usd_per_GiB) */
    PM_DIM_PER_AREA = 17,        /* 1/mm2 (per_cm2, per_mm2): defect density */
    PM_DIM_LENGTH_MM = 18        /* mm (kept in mm, the unit of the area model): wafer sizes */
} pm_dimension;

/**
 * Looks up a unit suffix ("MiB", "GBps", "us", "TOPS", "frac", ...). On success stores the
 * factor to SI and the dimension (either may be NULL) and returns true; false when unknown.
 */
PM_API bool pm_unit_lookup(const char *unit, double *to_si, pm_dimension *dim);

/**
 * Parses a quantity with an optional unit, "192MiB", "1.6 TBps", "16k" (k = 1e3... for
 * dimensionless, "Ki" = 1024; token counts: pm_token_count_parse), into SI. want is the expected
 * dimension (PM_DIM_NONE for counts: accepts k, M, G and Ki, Mi, Gi multipliers). Returns PM_OK,
 * PM_ERR_RANGE (not a finite
 * number) or PM_ERR_UNIT (unknown unit, or a unit of another dimension).
 */
PM_API pm_status pm_quantity_parse(const char *text, pm_dimension want, double *out,
                                   pm_error *err);

/**
 * Parses a token count (a sequence or context length): as pm_quantity_parse for a count, except
 * that the multipliers k (or K), M and G are 1024, 1024^2 and 1024^3, as context lengths are
 * named ("16k" = 16384, the paper's 16K); Ki, Mi, Gi and plain numbers read as there. The
 * count shortcuts --seq and --context, the seq sweep axis and the overrides of workload.seq_len,
 * sliding_window and max_position_embeddings read token counts. Returns the errors of
 * pm_quantity_parse, or PM_ERR_NOMEM. Bytes and bandwidths keep their units (MB = 1e6 bytes, MiB =
 * 2^20).
 */
PM_API pm_status pm_token_count_parse(const char *text, double *out, pm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Allreduce                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/**
 * Time of one allreduce of message_bytes (the full vector each device holds) over the cluster
 * with algorithm algo (PM_AR_AUTO picks the fastest that the topology allows; *used, may be
 * NULL, tells which). Returns 0 for one device or an empty message.
 * Returns PM_OK, PM_ERR_INVALID_ARG (NULL cluster or time, a negative or non-finite message, a
 * topology or algorithm outside its enum), PM_ERR_INCONSISTENT (an algorithm the topology cannot
 * run, e.g. oneshot on a ring; bad device counts) or PM_ERR_RANGE (a link bandwidth not finite
 * and > 0, a latency not finite and >= 0, or a time that is not finite): never PM_OK with an
 * infinite time.
 */
PM_API pm_status pm_allreduce_time(const pm_cluster *c, pm_allreduce_algo algo,
                                   double message_bytes, double *time_s, pm_allreduce_algo *used,
                                   pm_error *err);

/**
 * Time of one reduce-scatter (input message_bytes per device, each rank keeping its 1/p of the
 * sum) or one all-gather (output message_bytes per device) over the tensor-parallel group with
 * algorithm algo, for sequence parallelism; the two cost the same (one is the other reversed).
 * Per algorithm, n bytes, p devices, B = link bandwidth x allreduce_efficiency_frac:
 *   ring            (p-1) (alpha + n/(pB))        half the ring allreduce: RS + AG = AR
 *   twoshot         alpha + n/(pB) (mesh), alpha + (p-1)n/(pB) (switch): half of twoshot
 *   oneshot         as twoshot's half: each rank reads only its shard from every peer
 *   tree            ceil(log2 p) alpha + (p-1)n/(pB): recursive halving (doubling), which moves
 *                   (p-1)/p n, not the tree allreduce's whole messages, so RS + AG < tree AR
 *   hierarchical    intra-node phase + inter-node ring RS (AG) of n/q: RS + AG = AR
 *   ring_pipelined  alpha + (p-1)n/(pB): each collective keeps its own start-up, so
 *                   RS + AG = AR + alpha
 * auto picks the fastest the topology allows (*used, may be NULL). Returns 0 for one device or
 * an empty message; the statuses of pm_allreduce_time.
 */
PM_API pm_status pm_reduce_scatter_time(const pm_cluster *c, pm_allreduce_algo algo,
                                        double message_bytes, double *time_s,
                                        pm_allreduce_algo *used, pm_error *err);
/** The all-gather's time: pm_reduce_scatter_time's (see there). */
PM_API pm_status pm_all_gather_time(const pm_cluster *c, pm_allreduce_algo algo,
                                    double message_bytes, double *time_s,
                                    pm_allreduce_algo *used, pm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Computation graph                                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef enum pm_node_kind {
    PM_NODE_EMBEDDING = 0,
    PM_NODE_NORM = 1,        /* RMSNorm */
    PM_NODE_MATMUL = 2,      /* reads weights */
    PM_NODE_ROPE = 3,        /* RoPE + KV append */
    PM_NODE_ATTENTION = 4,   /* reads the KV cache */
    PM_NODE_ELEMENTWISE = 5, /* SiLU * mul, residual add */
    PM_NODE_ALLREDUCE = 6,   /* a communication node */
    PM_NODE_PREFETCH = 7,    /* HBM -> L2 on the prefetch stream */
    PM_NODE_FUSED_MATMUL_ALLREDUCE = 8, /* the fused baseline's chunked GEMM + allreduce */
    PM_NODE_ALLTOALL = 9,    /* a communication node: MoE dispatch or combine over the EP ranks */
    PM_NODE_REDUCE_SCATTER = 10, /* a communication node: sequence parallel's sum, split by
                                    tokens */
    PM_NODE_ALL_GATHER = 11, /* a communication node: sequence parallel's gather of the tokens */
    PM_NODE_RECV = 12,       /* a communication node: a pipeline stage's receive of its input
                                (the previous stage's activations; the first stage's: the
                                sampled tokens' ids from the last) */
    PM_NODE_KIND_COUNT = 13
} pm_node_kind;

/** "Embedding", "RMSNorm", "MatMul", "RoPE", "SelfAttention", "Elementwise", "AllReduce",
 * "Prefetch", "FusedMatMulAllReduce", "AllToAll", "ReduceScatter", "AllGather" (the graph JSON
 * spelling); "?" when invalid. */
PM_API const char *pm_node_kind_name(pm_node_kind kind);

/** What a node is in the decoder, set by the graph builder (pm_graph_build) so that passes and
 * evaluators find a layer's operations by role, never by name. Graphs built by hand or read
 * with pm_graph_from_json carry PM_ROLE_NONE unless their author sets one (the JSON format does
 * not record roles). Values are pinned. */
typedef enum pm_node_role {
    PM_ROLE_NONE = 0,        /* unknown: a hand-built node, or a prefetch */
    PM_ROLE_EMBEDDING = 1,
    PM_ROLE_ATTN_NORM = 2,   /* the norm before attention */
    PM_ROLE_QKV = 3,         /* the Q, K and V projections (MLA: the query's and the latent's
                                down-projections from the hidden state) */
    PM_ROLE_ROPE = 4,        /* RoPE and the KV-cache append */
    PM_ROLE_ATTENTION = 5,   /* the attention core, reading the KV cache */
    PM_ROLE_O = 6,           /* the output projection (fused with its allreduce in fused mode) */
    PM_ROLE_ATTN_ALLREDUCE = 7,
    PM_ROLE_MLP_NORM = 8,    /* the norm before the MLP */
    PM_ROLE_GATE = 9,
    PM_ROLE_UP = 10,
    PM_ROLE_ACTIVATION = 11, /* SiLU x mul (gated) or the activation (plain MLP) */
    PM_ROLE_DOWN = 12,       /* the down projection (fused with its allreduce in fused mode) */
    PM_ROLE_MLP_ALLREDUCE = 13,
    PM_ROLE_FINAL_NORM = 14,
    PM_ROLE_LM_HEAD = 15,
    PM_ROLE_Q_UP = 16,       /* MLA: the query's up-projection from its low rank */
    PM_ROLE_K_UP = 17,       /* MLA: the latent's key up-projection (decode: absorbed into the
                                query; prefill: the keys decompressed) */
    PM_ROLE_V_UP = 18,       /* MLA: the latent's value up-projection */
    PM_ROLE_ROUTER = 19,     /* MoE: the router's scores (hidden x experts, whole) */
    PM_ROLE_DISPATCH = 20,   /* MoE: the all-to-all sending tokens to their experts' ranks */
    PM_ROLE_EXPERT_GATE = 21, /* MoE: the routed experts' gate matrices on the device */
    PM_ROLE_EXPERT_UP = 22,
    PM_ROLE_EXPERT_ACTIVATION = 23,
    PM_ROLE_EXPERT_DOWN = 24,
    PM_ROLE_COMBINE = 25,    /* MoE: the all-to-all returning the experts' outputs */
    PM_ROLE_SHARED_GATE = 26, /* MoE: the shared experts (every token runs them) */
    PM_ROLE_SHARED_UP = 27,
    PM_ROLE_SHARED_ACTIVATION = 28,
    PM_ROLE_SHARED_DOWN = 29,
    /* Sequence parallelism (pm_cluster.sequence_parallel): */
    PM_ROLE_ATTN_REDUCE_SCATTER = 30, /* after the output projection */
    PM_ROLE_MLP_REDUCE_SCATTER = 31,  /* after the down projection */
    PM_ROLE_ATTN_ALL_GATHER = 32,     /* before the QKV projection */
    PM_ROLE_MLP_ALL_GATHER = 33,      /* before the MLP's input projections */
    PM_ROLE_HEAD_ALL_GATHER = 34,     /* before the LM head */
    /* MoE routing kernels of their own (an engine's, where its runtime gives them): */
    PM_ROLE_MOE_TOPK = 35,  /* softmax and top-k over the router's scores */
    PM_ROLE_MOE_ALIGN = 36, /* the token slots sorted by expert (moe_align_block_size) */
    PM_ROLE_MOE_SUM = 37,   /* un-permute: each token's k expert outputs summed (moe_sum) */
    PM_ROLE_ACT_QUANT = 38, /* a linear's 16-bit input quantised to fp8 (scaled_fp8_quant) */
    PM_ROLE_STAGE_RECV = 39, /* a pipeline stage's receive, before its first node */
    PM_ROLE_COUNT = 40
} pm_node_role;

/** "o", "qkv", "lm_head"...; "?" for an invalid value. */
PM_API const char *pm_node_role_name(pm_node_role role);

/** Streams of the two-stream schedule. */
enum { PM_STREAM_MAIN = 0, PM_STREAM_PREFETCH = 1 };

/** One operation on one device. Bytes are per device. */
typedef struct pm_node {
    pm_node_kind kind;
    pm_node_role role;      /* what it is in the decoder (PM_ROLE_NONE when unknown) */
    char name[32];          /* "L3.QKV", "L3.AR.attn" */
    int layer;              /* -1 for embedding / head */
    int stream;             /* PM_STREAM_MAIN or PM_STREAM_PREFETCH */
    pm_dtype dtype;         /* compute datatype */
    double flop;            /* floating-point (or integer) operations */
    double act_bytes;       /* activations read and written (always HBM) */
    double weight_bytes;    /* read-only weights: prefetchable (MatMul) */
    double kv_bytes;        /* read-only KV cache: prefetchable (Attention) */
    bool kv_strided;        /* KV read with more than one KV head per device */
    bool kv_paged;          /* decoded by the runtime's PagedAttention kernel though the model
                               as a whole is not (a block-sparse layer under a runtime with
                               paged_attention PM_PAGED_FALLBACK): its KV reads at
                               paged_attention_efficiency_frac */
    bool routed;            /* its weights are the experts the router chose: known only after
                               the router runs, so prefetchable only under an all-to-all (the
                               dispatch), never under an earlier allreduce */
    double l2_bytes;        /* of weight_bytes + kv_bytes, what is served from L2 */
    double comm_bytes;      /* allreduce message (ALLREDUCE, FUSED); what each device holds for
                               an all-to-all (ALLTOALL); what a stage receives (RECV) */
    bool inter_node;        /* RECV: the send crosses the nodes' link (else the node's own) */
    double m, k, n;         /* GEMM shape (MatMul, FUSED) for the tiling bound; 0 otherwise */
    int chunks;             /* FUSED: pipeline chunks, 0 = the best of 1..16 */
    int prefetch;           /* consumers: index of the prefetch node serving it, or -1 */
    int consumer;           /* PREFETCH: index of the node it serves, else -1 */
    int trigger;            /* PREFETCH: index of the communication node that starts it, else -1 */
    double window_bytes;    /* communication nodes after insertion: bytes prefetched under it */
    int overflow;           /* communication nodes after insertion: the first node that did not
                               fit (-1: the window ended first) */
} pm_node;

/** Edge kinds: data dependence (end -> start) or trigger (start -> start, an event). */
typedef enum pm_edge_kind { PM_EDGE_DATA = 0, PM_EDGE_TRIGGER = 1 } pm_edge_kind;

typedef struct pm_edge {
    int from, to;
    pm_edge_kind kind;
} pm_edge;

/** A per-device computation graph: nodes in main-stream program order plus edges. */
typedef struct pm_graph {
    pm_node *nodes;
    size_t n_nodes, cap_nodes;
    pm_edge *edges;
    size_t n_edges, cap_edges;
} pm_graph;

/** Allocates an empty graph; NULL on allocation failure. Free with pm_graph_free. */
PM_API pm_graph *pm_graph_alloc(void);
/** Frees a graph of pm_graph_alloc, its nodes and edges. g may be NULL. */
PM_API void pm_graph_free(pm_graph *g);

/** The largest graphs the library builds, reads or accepts through pm_graph_add_node and
 * pm_graph_add_edge (indices stay within int; a whole model is a few thousand nodes). */
#define PM_MAX_GRAPH_NODES 4194304   /* 2^22 */
#define PM_MAX_GRAPH_EDGES 16777216  /* 2^24 */

/**
 * Appends a node (copied). index_out (may be NULL) receives its index. Returns PM_OK,
 * PM_ERR_NOMEM, or PM_ERR_INVALID_ARG: g or node NULL, the graph already holds
 * PM_MAX_GRAPH_NODES nodes, or the node itself is malformed (kind, role, stream or dtype
 * outside its enum; an index field prefetch, consumer, trigger or overflow below -1 or at
 * least PM_MAX_GRAPH_NODES; a byte count, flop count or GEMM dimension negative or not finite;
 * chunks negative). Index fields may name nodes added later: pm_graph_check, which every pass
 * runs first, checks them against the finished graph.
 */
PM_API pm_status pm_graph_add_node(pm_graph *g, const pm_node *node, int *index_out);

/**
 * Checks a whole graph as the passes need it: every node as pm_graph_add_node does, every index
 * field -1 or the index of a node of g (a consumer's prefetch a PREFETCH node, a prefetch's
 * consumer a main-stream node, its trigger a communication node), every edge between nodes of
 * g. err names the node ("$.nodes[7].trigger") or edge. Returns PM_OK or PM_ERR_INVALID_ARG.
 */
PM_API pm_status pm_graph_check(const pm_graph *g, pm_error *err);
/** Appends an edge from node from to node to (indices of nodes already added). Returns PM_OK,
 * PM_ERR_NOMEM or PM_ERR_INVALID_ARG (g NULL, an index out of range, kind not an edge kind, or
 * PM_MAX_GRAPH_EDGES edges already). */
PM_API pm_status pm_graph_add_edge(pm_graph *g, int from, int to, pm_edge_kind kind);

/** How a scenario splits over its devices (busiest device). */
typedef struct pm_shard {
    double q_heads;         /* query heads on the busiest device (fractional when ideal) */
    double kv_heads;        /* KV heads held by the busiest device */
    bool kv_replicated;     /* p > kv_heads: each device holds a full KV head */
    bool uneven;            /* heads do not divide evenly: the busiest device is reported */
    double mlp_cols;        /* intermediate columns per device */
    double vocab_cols;      /* LM-head rows per device */
    /* MoE (0 for a dense model): */
    int attn_dp;            /* ranks the attention runs data parallel over (cluster.
                               attention_data_parallel: devices; 1 otherwise) */
    int ep;                 /* expert-parallel ranks */
    int moe_tp;             /* devices per EP rank: each expert's matrices split over them */
    double experts_local;   /* routed experts the busiest device holds: experts / ep */
    double expert_cols;     /* one routed expert's columns per device: width / moe_tp */
    double shared_cols;     /* all shared experts' columns per device: split over every
                               device when ep = 1, whole on every device when ep > 1 */
} pm_shard;

/** Computes the per-device split. Returns PM_OK or PM_ERR_INCONSISTENT (devices > heads
 * without ideal sharding) or PM_ERR_INVALID_ARG. */
PM_API pm_status pm_shard_compute(const pm_scenario *s, pm_shard *out, pm_error *err);

/** What the busiest device holds (bytes): the one home of the per-device weight and KV rules
 * (pm_estimate_compute's memory figures and the CLI's footprint both read it). */
typedef struct pm_footprint {
    double qkv_weight_bytes;   /* one layer's Q, K and V projections */
    double attn_weight_bytes;  /* one layer's attention weights: Q, K, V and O */
    double mlp_weight_bytes;   /* one layer's MLP matrices (3 gated, 2 plain) */
    double layer_weight_bytes; /* attention + MLP */
    double lm_head_bytes;      /* the LM head's rows on this device */
    double embedding_bytes;    /* the input embedding's rows on this device, vocabulary-parallel
                                  like the LM head (0 when tied to it), and a learned position
                                  embedding's, whole */
    double weight_bytes;       /* layers x layer + LM head + embedding (MoE: the dense layers x
                                  layer_weight_bytes + moe_layers x moe_layer_weight_bytes) */
    double kv_bytes_per_token; /* K and V of one position of every sequence of the batch, one
                                  layer */
    double kv_bytes;           /* the KV cache of all layers at context_len: a local layer
                                  holds min(context_len, sliding_window) positions (a
                                  block-sparse one all of them) */
    int local_layers;          /* layers attending through the sliding window or block-sparsely */
    double kv_bytes_global_layer; /* one global layer's KV cache at context_len */
    double kv_bytes_local_layer;  /* one local layer's (0 when there are none) */
    /* MoE (0 for a dense model); layer_weight_bytes and mlp_weight_bytes are a dense layer's. */
    int moe_layers;               /* layers with a MoE block */
    double expert_weight_bytes;   /* one routed expert's matrices on this device */
    double moe_weight_bytes;      /* one MoE layer's MoE block: local experts, shared experts
                                     and the router */
    double moe_layer_weight_bytes; /* attention + MoE block */
    double experts_read_per_step; /* distinct local experts the busiest device reads per MoE
                                     layer per decode step (pm_moe_reads_compute at batch) */
    double moe_read_bytes;        /* one MoE block's weights read per decode step: the experts
                                     read, the shared experts and the router */
} pm_footprint;

/** One row of the footprint report (the paper's Fig 2): what one layer takes per device on a
 * given number of devices. Bytes. */
typedef struct pm_footprint_row {
    int devices;
    int expert_parallel;          /* the row's EP degree */
    double attn_weight_bytes;     /* one layer's attention weights */
    double kv_bytes;              /* one layer's KV cache at the context: the largest layer's (a
                                     global layer's, or the window's when every layer is local) */
    double mlp_weight_bytes;      /* one dense layer's MLP */
    double kv_local_bytes;        /* one local layer's KV cache (0 without local layers) */
    double moe_weight_bytes;      /* MoE: one MoE block's weights on the device */
    double moe_read_bytes;        /* MoE: what a decode step reads of them */
    double experts_read_per_step; /* MoE: distinct local experts read per MoE layer and step */
    bool ideal_split;             /* more devices than Megatron sharding splits: the ideal split
                                     with whole KV heads is shown */
} pm_footprint_row;

/**
 * The footprint of scenario s on `devices` devices at context_len cached tokens: the experts
 * over ep ranks when ep > 0 (checked as the plan checks it: a MoE model, dividing the devices
 * and the experts), else over every device when the scenario uses expert parallelism and the
 * experts divide, else tensor-parallel. Beyond the heads Megatron sharding can split, the ideal
 * split (ideal_split). Returns PM_OK, PM_ERR_INVALID_ARG, or the plan's error for an ep that
 * does not fit the row.
 */
PM_API pm_status pm_footprint_row_compute(const pm_scenario *s, int devices, int ep,
                                          int64_t context_len, pm_footprint_row *out,
                                          pm_error *err);

/** Expected expert reads of one MoE layer for a step of `tokens` tokens (src/moe.c). */
typedef struct pm_moe_reads {
    double experts_touched;  /* distinct routed experts the tokens touch over all devices:
                                E (1 - (1 - k/E)^T) under uniform routing */
    double experts_local;    /* routed experts each device holds: E / ep */
    double experts_mean;     /* distinct local experts of a rank, the mean over ranks */
    double experts_read;     /* distinct local experts the busiest rank reads (expected
                                maximum over the ranks) */
    double token_slots;      /* (token, expert) pairs the busiest rank computes, expected */
    double upper_bound;      /* min(E / ep, T k): every pick a new expert (aiconfigurator) */
} pm_moe_reads;

/**
 * The expected expert reads of a MoE layer of s at `tokens` (> 0) tokens per step, under the
 * workload's routing skew. Each expert's chance to be touched is p_i = 1 - (1 - pi_i)^T with
 * pi_i = min(1, k w_i) its chance per token (w_i = 1/E uniform); a rank's distinct count is
 * the sum of its experts' indicators, taken as independent (a Poisson binomial; binomial
 * when uniform), and the busiest rank's expectation is sum_d (1 - prod_r F_r(d - 1)) over the
 * ranks' distributions F_r taken as independent, floored at ceil(k / ep) (a token's k distinct
 * picks reach some rank k / ep times). tests/test_moe.c checks it against a Monte-Carlo
 * table within 2%. out is overwritten (zero for a dense model). Returns PM_OK or
 * PM_ERR_INVALID_ARG (NULL, tokens not > 0, more than PM_MAX_EXPERTS experts, an expert-
 * parallel degree that does not divide them).
 */
PM_API pm_status pm_moe_reads_compute(const pm_scenario *s, double tokens, pm_moe_reads *out,
                                      pm_error *err);

/**
 * The per-device footprint of s at context_len cached tokens, under shard (NULL: the
 * scenario's own split, pm_shard_compute). out is overwritten. Returns PM_OK,
 * PM_ERR_INVALID_ARG (s or out NULL, context_len < 0) or an error of pm_shard_compute.
 */
PM_API pm_status pm_footprint_compute(const pm_scenario *s, const pm_shard *shard,
                                      int64_t context_len, pm_footprint *out, pm_error *err);

/**
 * Builds the per-device graph of a whole forward pass: embedding, `layers` decoder layers
 * (layers <= 0: all of the model's), final norm and LM head. Decode at context length
 * context_len (tokens already cached), or prefill of context_len tokens. Allreduce nodes are
 * left out when there is one device. g is cleared first.
 * Returns PM_OK, PM_ERR_NOMEM, PM_ERR_INCONSISTENT or PM_ERR_INVALID_ARG.
 */
PM_API pm_status pm_graph_build(const pm_scenario *s, pm_phase phase, int64_t context_len,
                                int layers, pm_graph *g, pm_error *err);

/**
 * The paper's Algorithm 1. For each communication node, visits its successors in order until
 * the next communication node; for each MatMul (weights) or Attention (KV) node adds its bytes
 * to the window's sum and, while the sum stays strictly below capacity_bytes, inserts a
 * prefetch node on the prefetch stream triggered by the communication node; at the first node
 * that would reach the capacity it stops visiting for that communication node.
 * out is cleared and receives the new graph; in is not modified.
 * Returns PM_OK, PM_ERR_NOMEM or PM_ERR_INVALID_ARG.
 */
PM_API pm_status pm_insert_prefetch(const pm_graph *in, double capacity_bytes, pm_graph *out,
                                    pm_error *err);

/** Bytes that insertion would prefetch for node n: weights of a MatMul, the KV cache of an
 * Attention node, 0 otherwise (M(n) of Algorithm 1). n may not be NULL. */
PM_API double pm_node_prefetchable_bytes(const pm_node *n);

/** Writes the graph as JSON (nodes and edges) or Graphviz DOT into a new NUL-terminated
 * string; the caller frees it with free(). Returns PM_OK, PM_ERR_NOMEM, PM_ERR_INVALID_ARG. */
PM_API pm_status pm_graph_to_json(const pm_graph *g, char **text_out, pm_error *err);
/** As pm_graph_to_json, in Graphviz DOT (prefetches and communication filled in colour, trigger
 * edges dashed). */
PM_API pm_status pm_graph_to_dot(const pm_graph *g, char **text_out, pm_error *err);

/**
 * Reads a graph from JSON text (the format pm_graph_to_json writes) so that other tools can
 * hand the library their own graph. file names the source in errors (may be NULL).
 */
PM_API pm_status pm_graph_from_json(const char *text, size_t len, const char *file, pm_graph *g,
                                    pm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Cost and schedule                                                                           */
/* ------------------------------------------------------------------------------------------ */

/** The roofline terms of one operation. */
typedef struct pm_op_cost {
    double compute_s;   /* flop / (peak * efficiency) */
    double hbm_s;       /* HBM bytes / effective HBM bandwidth */
    double l2_s;        /* L2 bytes / L2 bandwidth */
    double comm_s;      /* allreduce (ALLREDUCE and FUSED nodes) */
    double launch_s;
    double total_s;     /* max(compute, hbm + l2) + launch, or the communication time */
    double hbm_bytes;   /* HBM traffic including the tiling bound */
    int chunks;         /* FUSED: chunk count used */
} pm_op_cost;

/** Roofline cost of node i of g for scenario s. Returns PM_OK, PM_ERR_INVALID_ARG (NULL, i out
 * of range, a malformed node), PM_ERR_INCONSISTENT (an allreduce the cluster cannot run) or
 * PM_ERR_RANGE (a time that is not finite: never PM_OK with one). */
PM_API pm_status pm_op_cost_compute(const pm_scenario *s, const pm_graph *g, size_t i,
                                    pm_op_cost *out, pm_error *err);

/** Execution modes, always computed side by side. */
typedef enum pm_mode {
    PM_MODE_SERIAL = 0,   /* one stream, no overlap (the paper's baseline) */
    PM_MODE_FUSED = 1,    /* O and Down MatMuls fused with their allreduce, k chunks */
    PM_MODE_PRESERVE = 2, /* insertion pass + two-stream schedule */
    PM_MODE_COUNT = 3
} pm_mode;

/** "serial", "fused", "preserve"; "?" for an invalid value. */
PM_API const char *pm_mode_name(pm_mode mode);

/** Start and end of one node in a schedule. */
typedef struct pm_slot {
    double start_s, end_s;
} pm_slot;

/** A computed schedule of a graph. */
typedef struct pm_schedule {
    pm_slot *slots;      /* one per node of the graph it was computed for */
    size_t n_slots;
    double makespan_s;
    double main_busy_s;      /* time the main stream spends running ops */
    double prefetch_busy_s;  /* time the prefetch stream spends running ops */
    double comm_s;           /* time in communication nodes */
} pm_schedule;

/**
 * Schedules g on two streams: the main stream runs its nodes in order, each after its data
 * predecessors end; a prefetch node starts when its trigger starts (and after the previous
 * prefetch); a consumer waits for its prefetch's end, or, with s->accel.prefetch_consumer ==
 * PM_CONSUMER_STREAM, starts when the main stream reaches it and ends at max(start + its cost
 * from L2, min(its prefetch's end, start + its cost from HBM)), cutting the prefetch if it ends
 * first. With s->options.hbm_sharing, concurrent
 * HBM traffic of the two streams shares the bandwidth (processor sharing).
 * sched is overwritten; free its slots with pm_schedule_release.
 * Returns PM_OK, PM_ERR_NOMEM or PM_ERR_INVALID_ARG.
 */
PM_API pm_status pm_schedule_compute(const pm_scenario *s, const pm_graph *g, pm_schedule *sched,
                                     pm_error *err);
/** Frees the slots of a schedule of pm_schedule_compute (not sched itself). sched may be NULL. */
PM_API void pm_schedule_release(pm_schedule *sched);

/* ------------------------------------------------------------------------------------------ */
/* End-to-end estimate                                                                         */
/* ------------------------------------------------------------------------------------------ */

/** What one device moves and computes over a step, or over a sum of steps (src/energy.c
 * documents the counting rules). */
typedef struct pm_traffic {
    double hbm_bytes;       /* HBM traffic: operators' own reads and writes (the tiling bound
                               included) and the prefetches' reads */
    double l2_write_bytes;  /* bytes prefetched into L2 */
    double l2_read_bytes;   /* prefetched bytes read back from L2 by their consumers */
    double link_bytes;      /* bytes the device sends over its links in allreduces */
    double mac[PM_DTYPE_COUNT]; /* multiply-accumulates (flop / 2) per compute datatype */
} pm_traffic;

/** Energy of one device by component (J). */
typedef struct pm_energy {
    double hbm_J;     /* hbm_bytes x energy per HBM byte */
    double l2_J;      /* L2 writes and reads x their energies per byte (a cache's pass-through
                         included: pm_energy_compute) */
    double link_J;    /* link_bytes x energy per link byte */
    double mac_J;     /* MACs x energy per MAC of their datatype */
    double static_J;  /* static power x time */
    double total_J;   /* the sum */
} pm_energy;

/** Cost of one device (usd), and the die-cost terms. */
typedef struct pm_device_cost {
    double die_mm2;         /* the package's silicon (pm_area_compute), all dies together */
    int dies_per_package;   /* compute dies + I/O dies (1: one monolithic die) */
    double dies_per_wafer;  /* gross compute dies per wafer (pm_dies_per_wafer; fractional) */
    double yield_frac;      /* good dies / dies, for one compute die (pm_die_yield) */
    double io_dies_per_wafer; /* the same for one I/O die (0 without I/O dies) */
    double io_yield_frac;     /* (0 without I/O dies) */
    double die_usd;         /* the good silicon of one device: per kind of die, its count x
                               wafer_usd / (dies_per_wafer x yield_frac) */
    double hbm_usd;         /* hbm_usd_per_byte x hbm_capacity_bytes */
    double package_usd;
    double device_usd;      /* die + HBM + package */
} pm_device_cost;

/** Results of one mode. */
typedef struct pm_mode_result {
    double request_s;       /* prefill + all decode steps */
    double prefill_s;
    double decode_s;        /* sum of the decode steps */
    double tpot_s;          /* one decode step at the final context length (seq_len - 1) */
    double tpot_mean_s;     /* decode_s / decode steps */
    double tokens_per_s;    /* DP x batch x decode steps / request_s (generated tokens of
                               every replica; a replica's: pipeline.replica_tokens_per_s) */
    pm_allreduce_algo allreduce; /* the algorithm used for decode allreduces */
    double allreduce_decode_s;   /* one decode allreduce; fused: the fused kernel's own
                                    communication of the message, over its fused_chunks, at
                                    the cluster's fused_latency_s */
    int fused_chunks;       /* FUSED: chunk count used */
    pm_traffic traffic;     /* one device over the request (prefill + every decode step) */
    pm_traffic prefill_traffic; /* one device over the prefill (0 with pipeline stages) */
    /* The following are 0 unless pm_estimate.energy_present (resp. cost_present). */
    pm_energy energy;            /* one device over the request */
    double tpot_energy_J;        /* one device, the decode step of tpot_s */
    double energy_per_token_J;   /* devices x energy.total_J / generated tokens */
    double avg_power_W;          /* energy.total_J / request_s: one device's average power */
    double tokens_per_J;         /* 1 / energy_per_token_J */
    double tokens_per_s_per_usd; /* tokens_per_s / (pm_cluster_total_devices x
                                    cost.device_usd) */
    /* The prefill's power (issue 47; 0 with pipeline stages, whose prefill traffic is not
     * kept). */
    double prefill_power_W;      /* the prefill's energy / prefill_s: one device's average power
                                    while it prefills */
    double prefill_clock_frac;   /* the share of the clock at which that power would meet the
                                    board power (pm_power_clock_frac in energy.c: the MACs' power
                                    ~ f^3, the bytes' ~ f); 1 within it. Reported and warned
                                    of, not applied to the times */
    /* Pipeline stages (issue 44; one stage: stage_decode_s = tpot_s, the rest 0). */
    double stage_decode_s;       /* the slowest stage's time for one micro-batch at the last
                                    decode context, its receive included */
    double bubble_decode_frac;   /* the stages' mean idle share of a decode step:
                                    1 - M x mean stage time / tpot_s (even stages: max(0,
                                    1 - M / PP)) */
    double bubble_prefill_frac;  /* the same of the prefill: the (PP - 1) fill and drain (even
                                    stages: (PP - 1) / (M + PP - 1)) */
    double recv_prefetch_bytes;  /* PRESERVE: what a stage prefetches into L2 behind its
                                    receive at the last decode context (the largest over the
                                    stages; 0 in the other modes and with one stage) */
} pm_mode_result;

/** The plan an estimate ran (issue 44): stages and replicas, micro-batches, the sends. */
typedef struct pm_pipeline_report {
    int stages;               /* PP */
    int replicas;             /* DP */
    int devices_total;        /* TP x PP x DP: every per-device figure's divisor */
    int nodes;                /* nodes the deployment takes (pm_cluster_node_devices each) */
    int micro_batches;        /* M micro-batches in flight (cluster.micro_batches, or
                                 min(PP, batch)) */
    int micro_batch;          /* sequences of the largest: ceil(batch / M) */
    int min_stage_layers, max_stage_layers;
    bool inter_node;          /* a stage boundary crosses nodes (the inter-node link) */
    double send_decode_s;     /* the slowest boundary's send of one micro-batch's activations in
                                 decode (alpha + bytes / B of its link); 0 with one stage */
    double send_prefill_s;    /* the same in the prefill (the micro-batch's prompt tokens) */
    double return_s;          /* the sampled tokens' return from the last stage to the first */
    double replica_tokens_per_s[PM_MODE_COUNT]; /* one replica's tokens_per_s: the mode's
                                                   tokens_per_s / DP */
} pm_pipeline_report;

/** Speculative decoding in an estimate (issue 45; all zero without): every decode step is a
 * verify step of draft_tokens + 1 tokens per sequence after draft_tokens draft steps, and a
 * verify step emits tokens_per_step tokens on average, so a mode's decode_s is (sum of the
 * verify steps + draft_tokens x sum of the draft steps) / tokens_per_step over the request's
 * contexts, its tpot_s (T_verify + k T_draft) / E at the last context, its prefill_s the
 * target's and the draft's prefill. */
typedef struct pm_spec_report {
    bool active;
    pm_spec_method method;
    int draft_tokens;              /* k */
    double tokens_per_step;        /* E = 1 + sum_j prod_{i<=j} a_i */
    double verify_step_s[PM_MODE_COUNT];   /* one verify step at the last context */
    double draft_step_s[PM_MODE_COUNT];    /* one draft step at the last context */
    double draft_prefill_s[PM_MODE_COUNT]; /* the draft's prefill of the prompt */
    double plain_tpot_mean_s[PM_MODE_COUNT]; /* the same scenario without speculation */
    double speedup_vs_plain[PM_MODE_COUNT];  /* plain_tpot_mean_s / tpot_mean_s */
    double draft_weight_bytes_per_device;  /* counted in weight_bytes_per_device (MTP: its
                                              layers; the embedding and head are shared) */
    double draft_kv_bytes_per_device;      /* counted in kv_bytes_per_device */
} pm_spec_report;

/** Everything an evaluation reports. */
typedef struct pm_estimate {
    pm_mode_result modes[PM_MODE_COUNT];
    double speedup_preserve_vs_serial;
    double speedup_preserve_vs_fused;
    double speedup_fused_vs_serial;
    int64_t prefill_tokens;  /* per sequence */
    int64_t decode_steps;
    pm_shard shard;
    int64_t kv_spill_context; /* first decode context length whose KV cache no longer fits the
                                 prefetch window (0: never prefetched, e.g. one device; -1:
                                 every layer is local and its window's KV cache always fits) */
    double l2_window_bytes;   /* the insertion capacity: L2 capacity x usable fraction */
    double weight_bytes_per_device; /* all weights held by one device */
    double experts_read_per_step;   /* MoE: distinct experts the busiest device reads per MoE
                                       layer per decode step (0 for a dense model) */
    double kv_bytes_per_device;     /* KV cache at the final context length */
    double hbm_usable_bytes_per_device; /* the HBM the weights and the KV cache may take: the
                                           capacity, times the runtime's usable share when it
                                           gives one (pm_runtime.hbm_usable_frac); what is left
                                           beyond them holds the engine's activations and
                                           workspace, which are not modelled */
    bool fits_hbm;            /* weights + KV <= hbm_usable_bytes_per_device */
    int allreduces_per_step;  /* allreduces of one decode step (0 on one device); each takes
                                 modes[m].allreduce_decode_s in serial and preserve */
    bool energy_present;      /* the accelerator has energy coefficients: energy figures set */
    bool cost_present;        /* the accelerator has cost coefficients: cost and per-dollar
                                 figures set */
    pm_device_cost cost;      /* when cost_present */
    pm_pipeline_report pipeline; /* stages, replicas, micro-batches, sends */
    pm_spec_report spec;         /* speculative decoding (issue 45) */
} pm_estimate;

/**
 * The relative tolerance within which a closed-form decode sum of pm_estimate_compute equals
 * adding its steps' times one by one (pm_decode_step_time, or the graph path's
 * pm_step_time_graph, at every context): serial and fused steps (and PRESERVE's where nothing
 * is prefetched, one device) are a constant plus each attention's maximum of two affine terms
 * of the context, so their sum over the decode steps is found without evaluating steps; it
 * differs from the step-by-step sum only in rounding (measured: under 1e-14 relative). The
 * tests assert it against the graph path (tests/test_estimate.c).
 */
#define PM_CLOSED_FORM_REL_TOL 1e-12

/**
 * Evaluates a scenario in all three modes: prefill, then every decode step with the KV cache
 * growing from the prompt length to seq_len - 1, integrated piecewise in closed form so the cost
 * does not grow with the sequence length (decode_s, request_s and what derives from them are
 * within PM_CLOSED_FORM_REL_TOL of the step-by-step sum). Returns PM_OK, PM_ERR_NOMEM,
 * PM_ERR_INCONSISTENT, PM_ERR_UNSUPPORTED, PM_ERR_RANGE or PM_ERR_INVALID_ARG. err may be NULL.
 */
PM_API pm_status pm_estimate_compute(const pm_scenario *s, pm_estimate *out, pm_error *err);

/**
 * The run report of `preserve-model --format json`, byte for byte: the tool and scenario, the
 * inputs (model, accelerator, devices, batch, seq_len, prefill_tokens, decode_steps),
 * tpot_context_len, per mode the request_s, prefill_s, decode_s, tpot_s, tpot_mean_s,
 * tokens_per_s, allreduce_algorithm and allreduce_decode_s (and fused_chunks for fused), the
 * speedups, the shard and the memory figures (with allreduces_per_step), energy, cost and power,
 * and the warnings (pm_scenario_warning's, then pm_estimate_warning's);
 * every number as pm_json_number writes it (byte counts exact, the rest round-trippable).
 * Names are JSON-escaped; the keys are documented in docs/output-format.md. s and e (the estimate
 * of s by pm_estimate_compute) may not be NULL. On success *text_out is a new NUL-terminated string
 * ending in a newline; the caller frees it
 * with free(). Returns PM_OK, PM_ERR_NOMEM or PM_ERR_INVALID_ARG (a NULL argument).
 */
PM_API pm_status pm_estimate_to_json(const pm_scenario *s, const pm_estimate *e,
                                     char **text_out, pm_error *err);

/**
 * The i-th (from 0) of the warnings about an estimate e of s (pm_estimate_compute's), beyond
 * pm_scenario_warning's, which every front end gives too: the weights and KV cache per device
 * exceed the usable HBM (e->fits_hbm false; the times are computed, for memory the device does
 * not have); then a mode's average power per device above the accelerator's board power (the
 * energies are upper bounds, and a real part would lower its clocks). Writes it as
 * pm_scenario_warning does and returns true, or returns false when there are at most i or s or
 * e is NULL.
 */
PM_API bool pm_estimate_warning(const pm_scenario *s, const pm_estimate *e, size_t i, char *note,
                                size_t n);
/**
 * pm_estimate_warning's for one step at context_len (>= 0) rather than a request: the weights
 * and the KV cache at that context (pm_footprint_compute) exceed the usable HBM of a device;
 * then the step's position (context_len) beyond the model's max_position_embeddings. For the
 * tools that show one step (a graph, a schedule). Returns false when there are at most i
 * warnings, or s is NULL or context_len negative.
 */
PM_API bool pm_context_warning(const pm_scenario *s, int64_t context_len, size_t i, char *note,
                               size_t n);

/** Room for any text of pm_json_number, its NUL included. */
#define PM_JSON_NUMBER_MAX 32
/**
 * Writes v as a JSON number: the shortest of 15, 16 or 17 significant digits ("%.*g") that
 * reads back (strtod) as exactly v, so that an integral value below 2^53 (a byte count) is
 * written whole in digits and every other value round-trips; "null" when v is not finite.
 * Writes at most n bytes into buf, NUL included (buf may be NULL when n is 0); returns the
 * length of the whole text (less than PM_JSON_NUMBER_MAX). The one number format of the JSON
 * the library and the tool write.
 */
PM_API int pm_json_number(double v, char *buf, size_t n);

/**
 * The graph one mode runs: the plain graph (serial), the graph with O and Down fused with their
 * allreduces (fused), or the plain graph after the insertion pass (preserve). layers <= 0 or
 * above the model's: all layers. g is overwritten. Errors as pm_graph_build and
 * pm_insert_prefetch.
 */
PM_API pm_status pm_graph_build_mode(const pm_scenario *s, pm_mode mode, pm_phase phase,
                                     int64_t context_len, int layers, pm_graph *g, pm_error *err);

/**
 * The graph one pipeline stage runs in mode (issue 44): stage (0-based) of s's pipeline plan
 * (cluster.pipeline_parallel stages), at one micro-batch (the largest: ceil(batch / M)
 * sequences): its receive (a communication node, PM_NODE_RECV: the previous stage's hidden
 * states over the link its boundary crosses; the first stage's, in decode, the sampled tokens'
 * ids from the last; none with one stage or on the first stage's prefill), the head on the
 * first stage, the stage's decoder layers (the first `layers` of them when 0 < layers < the
 * stage's), the tail on the last. PRESERVE's insertion fills the receive's window as a
 * collective's. With one stage it is pm_graph_build_mode's graph. Errors: PM_ERR_RANGE (no such
 * stage), those of the plan (pipeline_parallel, the placement) and of pm_graph_build_mode.
 * With one stage, stage 0 is pm_graph_build_mode's graph itself.
 */
PM_API pm_status pm_graph_build_stage(const pm_scenario *s, pm_mode mode, pm_phase phase,
                                      int64_t context_len, int stage, int layers, pm_graph *g,
                                      pm_error *err);

/**
 * Time of one decode step at context length context_len in one mode (the per-token latency),
 * for any context, also one whose KV cache would not fit the HBM (pm_step_model_max_context
 * says which fit). A speculating scenario's step is its verify step (k + 1 tokens a sequence;
 * not a token's time: its TPOT, with the draft's steps, is pm_estimate_compute's).
 */
PM_API pm_status pm_decode_step_time(const pm_scenario *s, pm_mode mode, int64_t context_len,
                                     double *time_s, pm_error *err);

/** Chunk groups a mixed step holds at most (pm_mixed_step.n_chunks). */
#define PM_MAX_STEP_CHUNKS 16

/** Prefill chunks of one shape in a mixed step: `count` prompts each prefill `tokens` tokens
 * from position `offset` (their first `offset` positions are already in the KV cache, from
 * earlier chunks). */
typedef struct pm_step_chunk {
    double count;   /* prompts with this chunk (> 0) */
    int64_t tokens; /* tokens of each chunk (>= 1) */
    int64_t offset; /* positions each prompt has cached before the chunk (>= 0) */
    double finishing; /* of the count, prompts whose last chunk this is: the step computes their
                         first token's logits (0 .. count) */
} pm_step_chunk;

/**
 * One step of continuous batching with chunked prefill (vLLM, SGLang, Sarathi-Serve): decode
 * tokens of decode_sequences sequences, each at decode_context cached positions, beside prefill
 * chunks. The step's GEMMs run over all its tokens (decode_sequences + sum of count x tokens),
 * its allreduces carry them all, and its attention is each part's: a decode token reads its
 * context's KV cache; a chunk scores its queries against its prompt's cached positions and its
 * own causal triangle (pairs(offset + tokens) - pairs(offset) query-key pairs per head, windows
 * applied) and reads the cached positions once. The LM head runs for the decode tokens and the
 * finishing prompts. Counts may be fractional (a steady state's means). The runtime's per-step
 * host work (step_overhead_s + sequences x sequence_overhead_s) counts the sequences the step
 * schedules, decode_sequences plus the chunks' counts (rounded), not the scenario's batch.
 */
typedef struct pm_mixed_step {
    double decode_sequences; /* decode tokens, one per sequence (>= 0) */
    int64_t decode_context;  /* positions each decoding sequence has cached (>= 0) */
    int n_chunks;            /* chunk groups, 0 .. PM_MAX_STEP_CHUNKS */
    pm_step_chunk chunks[PM_MAX_STEP_CHUNKS];
    int decode_tokens_per_sequence; /* speculative decoding's verify step: query tokens per
                                       decoding sequence, its next token and the k drafted
                                       (0 or 1: one; at most PM_MAX_SPEC_TOKENS + 1). The
                                       GEMMs and allreduces carry them all, each sequence's
                                       attention scores them at its context (the cache read
                                       once) plus their causal triangle, the LM head runs on
                                       each */
} pm_mixed_step;

/**
 * Time of one mixed step in one mode, on the fast path (its graph path, the tests' reference,
 * gives the same within 1e-12). PRESERVE runs Algorithm 1 over the step's own graph: its
 * allreduces carry the chunk's tokens too, its attention's KV reads are the step's. Multi-head
 * latent attention runs both of its forms in one step, as vLLM's MLA backend does: the decode
 * tokens absorbed over the latent cache, the chunks over their positions' keys and values
 * decompressed (W_UK and W_UV read by each form's kernels). Returns PM_OK, PM_ERR_INVALID_ARG
 * (NULL, a count or length out of range, a step of no token), or an error of
 * pm_scenario_check. Over pipeline stages (issue 44) the time is the period between two of
 * m's steps with M micro-batches like it in flight (cluster.micro_batches, or one per stage):
 * max(sum_i t_i, M max_i t_i) over the stages' times for m.
 */
PM_API pm_status pm_mixed_step_time(const pm_scenario *s, pm_mode mode, const pm_mixed_step *m,
                                    double *time_s, pm_error *err);

/** How the runtime schedules a step when prompts wait beside decoding sequences. */
typedef enum pm_serve_rule {
    PM_SERVE_DECODE_FIRST = 0,  /* chunked prefill: every step takes the decode tokens first and
                                   fills the rest of the chunk budget with prompt chunks (vLLM
                                   V1, SGLang, Sarathi-Serve) */
    PM_SERVE_PREFILL_FIRST = 1, /* whole prompts first: a step prefills waiting prompts (up to
                                   the budget) and decoding pauses (vLLM before V1 without
                                   chunked prefill) */
    PM_SERVE_RULE_COUNT
} pm_serve_rule;

/** Length classes a served workload's distribution holds at most (pm_serve_workload). */
#define PM_MAX_LENGTH_CLASSES 8

/** One class of a served workload's length distribution: its requests' prompt and output, and
 * its share of the requests (> 0; the shares are normalised over the classes). */
typedef struct pm_length_class {
    int64_t input_tokens;
    int64_t output_tokens;
    double share;
} pm_length_class;

/** How the closed-loop clients' requests fall in time. */
typedef enum pm_serve_arrival {
    PM_SERVE_STAGGERED = 0, /* spread evenly over the steps: a served population */
    PM_SERVE_WAVE = 1,      /* together: a benchmark's clients at fixed lengths (genai-perf,
                               benchmark_serving with ignore_eos) start at once, all end in the
                               same step and send again together: prefill-first, or
                               decode-first when the budget holds every prompt */
    PM_SERVE_ARRIVAL_COUNT
} pm_serve_arrival;

/**
 * A served workload: closed-loop clients, `concurrency` sequences in flight (each client sends
 * its next request when the last one ends), every request input_tokens in and output_tokens
 * out, at most chunk_budget tokens per step (max_num_batched_tokens, decode tokens included),
 * the requests staggered or in a wave.
 */
typedef struct pm_serve_workload {
    int64_t input_tokens;  /* prompt length (>= 1) */
    int64_t output_tokens; /* tokens generated per request (>= 1), the first by the prefill */
    double concurrency;    /* sequences in flight (>= 1) */
    int64_t chunk_budget;  /* tokens per step (>= 1; above concurrency for decode-first) */
    pm_serve_rule rule;
    double ttft_limit_s;   /* latency limits for goodput (0: none) */
    double tpot_limit_s;
    pm_serve_arrival arrival;
    double request_rate_per_s; /* > 0: an open loop, requests arriving at this rate (the
                                  concurrency is then each mode's own, found); 0: the closed
                                  loop at `concurrency` */
    int n_classes;             /* 0: every request input_tokens in, output_tokens out; 1 ..
                                  PM_MAX_LENGTH_CLASSES: each request drawn from classes (input
                                  and output tokens then unused; decode-first, staggered) */
    pm_length_class classes[PM_MAX_LENGTH_CLASSES];
} pm_serve_workload;

/** A distribution of request lengths as data (a "lengths" file, data/lengths/NAME.json: its
 * "classes", an array of {"input_tokens", "output_tokens", "share"}, and its "source"). */
typedef struct pm_lengths {
    char name[64];
    int n_classes; /* 1 .. PM_MAX_LENGTH_CLASSES */
    pm_length_class classes[PM_MAX_LENGTH_CLASSES];
    char source[512];
} pm_lengths;

/**
 * Loads a lengths file: ref a path or the name of a bundled one (data/lengths/<ref>.json), as
 * pm_scenario_load resolves names; opts's overrides apply to its keys ("classes" is an array:
 * not overridable by path). out is overwritten (zeroed on failure). Errors name the file and the
 * JSON path ($.classes[2].share): PM_ERR_IO, SYNTAX, TYPE, MISSING, UNKNOWN_KEY, RANGE,
 * NOT_FOUND, VALUE.
 */
PM_API pm_status pm_lengths_load(const char *ref, const pm_load_opts *opts, pm_lengths *out,
                                 pm_error *err);

/** A served workload's steady state in one mode (seconds; rates per second). */
typedef struct pm_serve_mode {
    double ttft_s;            /* time to first token: the prompt's steps (and its wait) */
    double tpot_s;            /* mean time per output token after the first */
    double tpot_max_s;        /* the longest gap between two tokens of a decoding sequence */
    double e2e_s;             /* a request from sending to its last token */
    double mixed_step_s;      /* a step carrying prompt tokens (0: none) */
    double decode_step_s;     /* a step of decode tokens alone (0: none) */
    double requests_per_s;
    double tokens_per_s;              /* output tokens of all the devices */
    double tokens_per_s_per_device;
    double tokens_per_s_per_user;     /* 1 / tpot_s: the interactivity */
    double goodput_tokens_per_s_per_device; /* tokens_per_s_per_device within the limits and
                                               the HBM (fits_hbm), else 0 */
    bool meets_limits; /* within the limits, and the cache fits the HBM */
    double tokens_per_s_per_mm2;   /* per device and mm2 of its die (0 without an area block) */
    double tokens_per_s_per_usd;   /* per dollar of the devices (0 without a cost block) */
    double energy_per_token_J;     /* all the devices' energy per output token (0 without an
                                      energy block) */
    double tokens_per_J;
    double in_flight;              /* sequences in flight: the concurrency, or at a request
                                      rate the mean the mode holds (Little's law) */
    bool saturated;                /* at a request rate: the mode cannot serve it (its most
                                      requests/s, at the concurrency the HBM or the budget
                                      allows, fall short; the queue grows without bound): the
                                      latencies are NaN, the throughput the most it serves */
} pm_serve_mode;

typedef struct pm_serve_result {
    pm_serve_mode modes[PM_MODE_COUNT];
    double decode_sequences;  /* sequences decoding in a step, on average */
    double prefilling;        /* sequences waiting for or in their prefill, on average */
    double prefill_steps;     /* steps one prompt's prefill spans (decode-first) */
    double mixed_step_frac;   /* share of the steps that carry prompt tokens */
    double prefill_tokens_per_mixed_step;
    bool budget_bound;        /* the chunk budget limits throughput: prompts queue */
    double weight_bytes_per_device;
    double kv_bytes_per_device;       /* the cache the sequences in flight hold, on average:
                                         under data-parallel attention the busiest rank's
                                         ceil(concurrency / ranks) (pm_shard.attn_dp) */
    double hbm_usable_bytes_per_device;
    bool fits_hbm;
    double max_concurrency;   /* the most sequences whose cache fits beside the weights (under
                                 data-parallel attention, over every rank) */
    double die_mm2;           /* 0 without an area block */
    double request_rate_per_s; /* the open loop's rate (0: a closed loop); the counts and the
                                  memory above are then the serial mode's state */
} pm_serve_result;

/**
 * The steady state of a served workload on s's devices (one tensor-parallel group), in every
 * mode, computed from the step rule in steps (independent of the step times), then each kind of
 * step costed once as a mixed step (pm_mixed_step_time's rules): its time does not grow with
 * output_tokens. Decode-first: a prompt's prefill spans T = ceil(input / (budget - decoding))
 * steps; with at most one prompt in prefill at a time, a share n of the steps carries its chunk
 * beside concurrency - 1 decode tokens and the others decode concurrency tokens, n = N T / (T +
 * output - 1); with more, every step carries chunks, and when the prompts' tokens would exceed
 * the budget it binds (budget_bound) and prompts queue. Prefill-first: each decode step of
 * concurrency tokens is followed by the prefill steps of the requests it ended. Decoding
 * sequences sit at the mean context of their decode (input + (output - 2) / 2, rounded), chunks
 * at the mean offset of a prompt's chunks: exact for attention without a window, whose work is
 * linear in both. A wave (PM_SERVE_WAVE, prefill-first): the N prompts prefill whole,
 * floor(budget / input) a step while decoding pauses, then the N sequences decode together;
 * the mean TTFT is the mean end of a prompt's prefill step, every request ends with the cycle.
 * Throughput follows Little's law (concurrency / e2e), TPOT from e2e - TTFT. At concurrency 1 it is
 * the static estimate at batch 1 (its decode steps at their mean
 * context). Data-parallel replicas (pm_cluster_dp > 1) each serve concurrency / dp sequences
 * (or request rate / dp): the per-device, per-user and latency figures are one replica's,
 * requests_per_s, tokens_per_s, in_flight and max_concurrency the deployment's (dp times);
 * fewer sequences than replicas is PM_ERR_INVALID_ARG. The cache: each sequence's mean held
 * positions, fits_hbm against the runtime's usable HBM. Speculative decoding (s->spec, issue 45):
 * every decode step is a verify step of
 * k + 1 tokens per decoding sequence (in the chunk budget too) beside the draft's steps (its
 * first forward beside the step's chunks, then k - 1 drafting steps), a request decodes in
 * (output - 1) / E steps (a mean, not rounded up), a decoding sequence holds k more positions
 * and the draft's weights and cache join each device's. Pipeline stages (pm_cluster_pp > 1,
 * issue 44): M micro-batches in flight (cluster.micro_batches, or one per stage, at most the
 * whole sequences in flight), each its own scheduler over concurrency / M sequences; a step's
 * time is the period max(sum_i t_i, M max_i t_i) of stage i's times for one micro-batch (its
 * receive, a window PRESERVE fills, and its layers); per-device figures over TP x PP devices,
 * the memory the tightest stage's. Returns PM_OK, PM_ERR_INVALID_ARG (NULL, a length, concurrency
 * or budget out of range: prefill-first needs a budget of at least the prompt, decode-first one
 * above the
 * concurrency), PM_ERR_UNSUPPORTED (a wave under decode-first whose prompts the budget does
 * not hold at once), or an error of
 * pm_mixed_step_time, pm_footprint_compute or the area, energy and cost models.
 */
PM_API pm_status pm_serve_compute(const pm_scenario *s, const pm_serve_workload *w,
                                  pm_serve_result *out, pm_error *err);
/** Whether w's requests run past the context s's model was trained for: its longest request
 * (input + output tokens, of its longest class) beyond model.max_position_embeddings (a model
 * that states none: never). *note (n bytes, may be NULL) says so. Computed either way: a
 * warning, as pm_scenario_warning's for the scenario's own sequence. */
PM_API bool pm_serve_workload_warning(const pm_scenario *s, const pm_serve_workload *w,
                                      char *note, size_t n);
/** The most sequences in flight whose cache fits beside the weights, with w's lengths, rule and
 * budget: what one holds depends on how many are in flight (a prompt in prefill holds part of
 * its own, a queued one half), so the fixed point of max_concurrency and the closed loop at it
 * (the open loop's cap), the deployment's (dp times a replica's). Errors as pm_serve_compute's
 * at one sequence a replica. */
PM_API pm_status pm_serve_max_in_flight(const pm_scenario *s, const pm_serve_workload *w,
                                        double *cap, pm_error *err);
/** The rule's name ("decode_first", "prefill_first"), or "?" when out of range. */
PM_API const char *pm_serve_rule_name(pm_serve_rule r);
/** The arrival pattern's name ("staggered", "wave"), or "?" when out of range. */
PM_API const char *pm_serve_arrival_name(pm_serve_arrival a);
/** The columns of a served point, as the serve command's CSV and the Python module's serve()
 * name them (docs/output-format.md): concurrency, each mode's figures, then the step counts and
 * the memory. */
PM_API size_t pm_serve_column_count(void);
/** The name of column i ("concurrency", "serial_tokens_per_s_per_device"...); NULL when
 * i >= pm_serve_column_count(). */
PM_API const char *pm_serve_column_name(size_t i);
/** Writes the first n columns of the point r at concurrency into values (NaN for the per-mm2,
 * per-dollar and per-joule figures the accelerator has no data for) and returns
 * pm_serve_column_count(); values may be NULL. */
PM_API size_t pm_serve_point_values(double concurrency, const pm_serve_result *r,
                                    double *values, size_t n);

/**
 * A burst: `requests` requests of one length sent at once (t = 0), as a serving benchmark at
 * request rate inf with no max concurrency sends them (vLLM's benchmark_serving). The engine
 * admits as many as it runs, serves them, admits more as sequences end, and the run ends when
 * the last request ends: a transient, not a steady state.
 */
typedef struct pm_burst_workload {
    int64_t requests;   /* N, all sent at t = 0 (1 .. PM_BURST_MAX_REQUESTS) */
    double max_running; /* the engine's most running sequences per scheduler (vLLM's
                           max_num_seqs; a virtual engine's under pipeline stages); 0: none,
                           only the HBM limits them */
    pm_serve_workload serve; /* the length (input_tokens, output_tokens; n_classes 0), the
                                chunk budget and the rule; its concurrency, arrival, request
                                rate and limits are not read */
} pm_burst_workload;

/** Requests a burst holds at most. */
#define PM_BURST_MAX_REQUESTS 1000000

/** A burst in one mode (seconds; means over the N requests). */
typedef struct pm_burst_mode {
    double ttft_s;      /* sending (t = 0) to the first token: waits for admission included */
    double tpot_s;      /* each request's (end - first token) / (output - 1), averaged */
    double e2e_s;       /* sending to the last token */
    double makespan_s;  /* t = 0 to the last request's end */
    double tokens_per_s; /* N x output / makespan: every device's output */
    double tokens_per_s_per_device;
} pm_burst_mode;

typedef struct pm_burst_result {
    pm_burst_mode modes[PM_MODE_COUNT];
    double admitted;        /* R: the most sequences running at once, over every
                               micro-batch (min of the runtime's and the HBM's, at most N) */
    double max_running;     /* the runtime's limit over the micro-batches (0: none) */
    double max_concurrency; /* the most sequences whose whole cache (input + output
                               positions) fits the usable HBM beside the weights */
    bool hbm_binds;         /* R is the HBM's (else the runtime's, or N: nothing binds) */
    double micro_batches;   /* schedulers in flight (pipeline stages' micro-batches; 1) */
    double waves;           /* prefill-first: ceil(N / R) waves; decode-first: N / R */
    int64_t steps;          /* decode-first: steps of the busiest micro-batch's scheduler
                               (0 under prefill-first) */
    double weight_bytes_per_device;
} pm_burst_result;

/**
 * A burst of w->requests requests on s's devices, in every mode. R = min(the runtime's
 * max_running per scheduler, the sequences whose cache of input + output positions fits the
 * usable HBM, spread over the M micro-batches) x M, at most N. Prefill-first: the requests
 * are served in waves of R, each pm_serve_compute's wave (PM_SERVE_WAVE: the prompts prefill
 * whole, floor(budget / input) a step, then decode together; every request of a wave ends
 * with it, so the next wave is admitted when it ends): wave j starts at the sum of the earlier
 * waves' makespans, its TTFT adds that wait. Decode-first (chunked prefill): each micro-batch's
 * scheduler is followed step by step: requests admitted in order up to its R / M running,
 * every step the decode tokens first, then the prompts in order filling the rest of the budget
 * (the first prompts decode while the later ones prefill), a request's first token at the end
 * of the step that ends its prefill; consecutive steps of decode tokens alone at one count are
 * timed once at their mean context (exact for attention without a window, as
 * pm_serve_compute), every other step at its own. Pipeline stages: M micro-batches (as
 * pm_serve_compute), the requests split evenly, each step the period with M like it in flight.
 * Returns PM_OK, PM_ERR_INVALID_ARG (NULL, a length, count, limit or budget out of range, a
 * prefill-first budget below the prompt), PM_ERR_UNSUPPORTED (a distribution of lengths,
 * data-parallel replicas, speculative decoding under decode-first, no sequence's cache fits
 * the HBM), PM_ERR_NOMEM, or an error of pm_serve_compute or pm_mixed_step_time.
 */
PM_API pm_status pm_burst_compute(const pm_scenario *s, const pm_burst_workload *w,
                                  pm_burst_result *out, pm_error *err);
/** The columns of a burst, as `serve --burst`'s CSV and the Python module's burst() name them
 * (docs/output-format.md): requests, each mode's figures, then the admission's. */
PM_API size_t pm_burst_column_count(void);
/** The name of column i ("requests", "serial_ttft_s"...); NULL when i >=
 * pm_burst_column_count(). */
PM_API const char *pm_burst_column_name(size_t i);
/** Writes the first n columns of burst r of `requests` requests into values and returns
 * pm_burst_column_count(); values may be NULL. */
PM_API size_t pm_burst_point_values(double requests, const pm_burst_result *r, double *values,
                                    size_t n);


/**
 * A prepared per-step model of one scenario and mode, for tools that ask for many step times
 * (a serving simulator, a scheduler): preparing costs about one estimate's share of work, then
 * each decode step time is a few hundred nanoseconds at most. Owns a copy of the scenario.
 */
typedef struct pm_step_model pm_step_model;

/** Prepares; *out is freed with pm_step_model_free. Errors as pm_decode_step_time, and a
 * speculating scenario is refused (PM_ERR_UNSUPPORTED naming $.speculative: a step is not a
 * token's time there, and the draft's memory is not in max_context). */
PM_API pm_status pm_step_model_new(const pm_scenario *s, pm_mode mode, pm_step_model **out,
                                   pm_error *err);
/** Time (s) of one decode step at context_len (>= 0), as pm_decode_step_time gives it.
 * Returns NaN for a negative context. Thread-safe: the model is not modified. */
PM_API double pm_step_model_decode_time(const pm_step_model *m, int64_t context_len);
/** The longest context (cached tokens per sequence, at the scenario's batch) whose weights and
 * KV cache fit the usable HBM of the busiest device, the rule of pm_estimate's fits_hbm: a
 * request of seq_len tokens fits where seq_len <= max_context (its last decode step runs at
 * context seq_len - 1 and writes the seq_len-th position, so a step at context max_context
 * itself needs one position more than fits);
 * -1 when the weights alone do not fit (or m is NULL), INT64_MAX when every context fits (every
 * layer's cache stops at its sliding window). pm_step_model_decode_time gives a time beyond it
 * too (the time the step would take were the cache there); a caller that admits requests
 * checks the context against this first. */
PM_API int64_t pm_step_model_max_context(const pm_step_model *m);
/** Frees a model of pm_step_model_new. m may be NULL. */
PM_API void pm_step_model_free(pm_step_model *m);

/* ------------------------------------------------------------------------------------------ */
/* Views: what a scheduled graph of a few layers shows (explain's windows, the timeline's bars) */
/* ------------------------------------------------------------------------------------------ */

/** What a prefetch brings into L2 for its consumer. Values are pinned. */
typedef enum pm_prefetch_what {
    PM_PREFETCH_WEIGHTS = 0,        /* a MatMul's weights */
    PM_PREFETCH_KV_CACHE = 1,       /* an attention's KV cache */
    PM_PREFETCH_ROUTED_EXPERTS = 2, /* the weights of the experts the router chose */
    PM_PREFETCH_WHAT_COUNT = 3
} pm_prefetch_what;

/** "weights", "kv_cache", "routed_experts" (the explain JSON's spelling); "?" when invalid. */
PM_API const char *pm_prefetch_what_name(pm_prefetch_what what);

/** "allreduce", "all_to_all", "reduce_scatter", "all_gather" or "receive" (a pipeline stage's)
 * for a communication node's kind (the explain JSON's spelling of a collective); "?" for any
 * other kind. */
PM_API const char *pm_collective_kind_name(pm_node_kind kind);

/** One prefetch of an explain window. */
typedef struct pm_explain_prefetch {
    int node;              /* the prefetch node in pm_explain.graph */
    int consumer;          /* the node it serves in pm_explain.graph */
    pm_prefetch_what what;
    double bytes;          /* what it moves from HBM into L2: weights and KV cache */
} pm_explain_prefetch;

/** One collective's prefetch window (Algorithm 1's decisions under it, and their timing). */
typedef struct pm_explain_window {
    int collective;          /* the allreduce or all-to-all in pm_explain.graph */
    pm_node_kind kind;       /* PM_NODE_ALLREDUCE or PM_NODE_ALLTOALL */
    double comm_bytes;       /* its message (the node's comm_bytes) */
    double collective_s;     /* its time in the schedule */
    size_t first_prefetch;   /* its prefetches: pm_explain.prefetches[first_prefetch] on */
    size_t n_prefetches;     /* how many (0: nothing prefetched under it) */
    double window_bytes;     /* the bytes prefetched under it (< pm_explain.l2_window_bytes) */
    int stopped_at;          /* the first node that did not fit, -1 when the window ended at
                                the next collective or the end of the graph */
    double stopped_bytes;    /* that node's bytes (an attention's KV cache, else its weights);
                                0 when stopped_at is -1 */
    bool stopped_routed;     /* stopped at routed experts under an allreduce: they are known
                                only after the router runs, so only the dispatch all-to-all may
                                prefetch them */
    double prefetch_busy_s;  /* the prefetch stream's busy time from the collective's start to
                                its last prefetch's end; 0 without prefetches */
    bool hidden;             /* the prefetches end within the collective (true without any) */
} pm_explain_window;

/** What `preserve-model explain` reports: the preserve graph of the first layers, scheduled,
 * and every collective's window in graph order. */
typedef struct pm_explain {
    pm_graph *graph;             /* the preserve graph of layers_shown layers (owned) */
    pm_schedule schedule;        /* its schedule (owned) */
    double l2_window_bytes;      /* Algorithm 1's capacity (pm_accelerator_l2_window_bytes) */
    int layers_shown;            /* the graph's decoder layers: 0 .. layers_shown - 1 */
    int repeat_from;             /* from this layer (1, or the first MoE layer) on, the layer
                                    classes (local or global attention, dense or MoE) repeat
                                    with period repeat_period (at most 64), and so do the
                                    windows: layers_shown is repeat_from + repeat_period + 1 (2
                                    when every layer is alike), at most the model's layers */
    int repeat_period;
    double experts_read_per_step; /* MoE: distinct routed experts one MoE layer's step reads on
                                     the busiest device (pm_footprint); 0 for a dense model */
    pm_explain_window *windows;  /* n_windows windows (owned; NULL when none: one device) */
    size_t n_windows;
    pm_explain_prefetch *prefetches; /* every window's prefetches, window by window (owned) */
    size_t n_prefetches;
    int stage, stages;           /* the pipeline stage shown (0-based) of the plan's stages */
    int first_layer;             /* the stage's first decoder layer (0 with one stage) */
    int stage_layers;            /* the stage's decoder layers (the model's with one stage) */
} pm_explain;

/**
 * Builds and schedules the preserve graph of scenario s (pm_graph_build_mode) at context_len
 * (>= 0) in phase, with the first layers up to where every class of layer has a window into
 * the next (pm_explain.layers_shown), and fills out with each collective's window. *out is
 * overwritten; release it with pm_explain_release (after an error it holds nothing). Returns
 * PM_OK, PM_ERR_INVALID_ARG (s or out NULL, a negative context), PM_ERR_NOMEM, or the errors
 * of pm_graph_build_mode and pm_schedule_compute.
 */
PM_API pm_status pm_explain_compute(const pm_scenario *s, pm_phase phase, int64_t context_len,
                                    pm_explain *out, pm_error *err);
/** pm_explain_compute of one pipeline stage (pm_graph_build_stage's graph: its receive's window
 * first, the layers counted from the stage's first); pm_explain_compute is stage 0. */
PM_API pm_status pm_explain_compute_stage(const pm_scenario *s, pm_phase phase,
                                          int64_t context_len, int stage, pm_explain *out,
                                          pm_error *err);
/** Frees what pm_explain_compute attached to e (not e itself), and zeroes it. e may be NULL. */
PM_API void pm_explain_release(pm_explain *e);

/** The lanes of a timeline: where a bar is drawn. Values are pinned. */
typedef enum pm_lane {
    PM_LANE_COMPUTE = 0,    /* the main stream's operations */
    PM_LANE_COLLECTIVE = 1, /* allreduces, fused GEMM+allreduces, MoE all-to-alls */
    PM_LANE_PREFETCH = 2,   /* the prefetch stream */
    PM_LANE_COUNT = 3
} pm_lane;

/** "compute", "collective", "prefetch" (the timeline's spelling); "?" when invalid. */
PM_API const char *pm_lane_name(pm_lane lane);

/** One bar of a timeline: a node that overlaps the layer shown. */
typedef struct pm_timeline_op {
    int node;       /* the node in pm_timeline.graph */
    pm_lane lane;
    double start_s; /* from the layer's start: a prefetch issued under the previous layer's last
                       collective starts before 0 */
    double end_s;
    double bytes;   /* a collective's message, a prefetch's weights and KV cache, an operation's
                       weights, KV cache and activations */
} pm_timeline_op;

/** What `preserve-model timeline` reports of one mode: the two-stream schedule of one decoder
 * layer standing for every layer of its class. */
typedef struct pm_timeline {
    pm_mode mode;
    pm_graph *graph;       /* the mode's graph of three layers (after the first MoE layer's
                              dense ones for a model whose first layers are dense) (owned) */
    pm_schedule schedule;  /* its schedule (owned) */
    int layer;             /* the layer shown: 1, the one after the first MoE layer's, or the
                              graph's last when it has fewer layers; a pipeline stage with a
                              receive: its first layer, from the receive on (the receive's
                              window) */
    double layer_s;        /* from its first main-stream node's start to the next layer's (or
                              the schedule's end) */
    pm_timeline_op *ops;   /* every node whose slot overlaps the layer, in graph order (owned) */
    size_t n_ops;
    int stage, stages;     /* the pipeline stage shown (0-based) of the plan's stages */
    int first_layer;       /* the stage's first decoder layer (0 with one stage); layer counts
                              from it (the stage's second layer: first_layer + 1) */
    int stage_layers;      /* the stage's decoder layers (the model's with one stage) */
} pm_timeline;

/**
 * Builds and schedules the graph of scenario s in mode (pm_graph_build_mode) at context_len
 * (>= 0) in phase, and fills out with the nodes that overlap the layer shown. *out is
 * overwritten; release it with pm_timeline_release (after an error it holds nothing). Returns
 * PM_OK, PM_ERR_INVALID_ARG (s or out NULL, mode out of range, a negative context),
 * PM_ERR_NOMEM, or the errors of pm_graph_build_mode and pm_schedule_compute.
 */
PM_API pm_status pm_timeline_compute(const pm_scenario *s, pm_mode mode, pm_phase phase,
                                     int64_t context_len, pm_timeline *out, pm_error *err);
/** pm_timeline_compute of one pipeline stage (pm_graph_build_stage's graph at one
 * micro-batch); pm_timeline_compute is stage 0. */
PM_API pm_status pm_timeline_compute_stage(const pm_scenario *s, pm_mode mode, pm_phase phase,
                                           int64_t context_len, int stage, pm_timeline *out,
                                           pm_error *err);
/** Frees what pm_timeline_compute attached to t (not t itself), and zeroes it. t may be NULL. */
PM_API void pm_timeline_release(pm_timeline *t);

/* ------------------------------------------------------------------------------------------ */
/* Die area and throughput density                                                             */
/* ------------------------------------------------------------------------------------------ */

/** Die-area breakdown of one accelerator (mm2). */
typedef struct pm_area {
    double compute_mm2;   /* coefficient x int8-equivalent dense peak */
    double l2_mm2;        /* coefficient x L2 capacity */
    double hbm_phy_mm2;   /* per stack x stacks */
    double link_phy_mm2;  /* per link x links */
    double other_mm2;     /* the compute dies' rest */
    double io_other_mm2;  /* the I/O dies' rest (0 without I/O dies): io_other_mm2, or more where
                             the compute dies stacked on them need the area (compute_on_io) */
    double die_mm2;       /* the sum: the package's silicon, every die together */
    int compute_dies;     /* >= 1 */
    double compute_die_mm2; /* one compute die: compute, other and the blocks not on the I/O
                               dies, over compute_dies */
    int io_dies;          /* >= 0 */
    double io_die_mm2;    /* one I/O die: its blocks and io_other over io_dies (0 without) */
} pm_area;

/** The lithography reticle: the largest die one exposure can print, 26 mm x 33 mm = 858 mm2
 * (the full exposure field of ASML's DUV and 0.33-NA EUV scanners). A die beyond it cannot be
 * built as one piece of silicon. */
#define PM_RETICLE_MM2 858.0

/**
 * Whether the largest die of the accelerator's package (a compute die or an I/O die,
 * pm_area_compute) is larger than the reticle (PM_RETICLE_MM2); *per_die_mm2 (may be NULL)
 * receives that die's area (0 without area coefficients, which is never over). An accelerator
 * file over it is refused; a what-if (an override, a sweep point) is warned of.
 */
PM_API bool pm_die_over_reticle(const pm_accelerator *a, double *per_die_mm2);

/**
 * The int8-equivalent dense peak used by the area model: the largest of the int8 and fp8 peaks,
 * twice the bf16/fp16 peak and four times the fp32 peak (area scales with multiplier bits).
 */
PM_API double pm_int8_equivalent_peak(const pm_accelerator *a);

/**
 * die_mm2 = compute + L2 + HBM PHY x stacks + link PHY x links + other + io_other (DESIGN.md
 * section 9), and its split into the package's compute and I/O dies.
 * Returns PM_OK, PM_ERR_INVALID_ARG (NULL), PM_ERR_MISSING (the accelerator has no area
 * coefficients) or PM_ERR_RANGE (a coefficient that is not finite and > 0, or other_mm2 not
 * finite and >= 0: a block that exists costs area).
 */
PM_API pm_status pm_area_compute(const pm_accelerator *a, pm_area *out, pm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Energy and dollar cost                                                                      */
/* ------------------------------------------------------------------------------------------ */

/**
 * What one decode step at context_len moves and computes on one device in one mode, counted on
 * the fast path that serves pm_estimate_compute (pm_graph_traffic counts the same on a graph).
 * out is overwritten. Errors as pm_decode_step_time.
 */
PM_API pm_status pm_decode_step_traffic(const pm_scenario *s, pm_mode mode, int64_t context_len,
                                        pm_traffic *out, pm_error *err);

/**
 * What graph g (built for scenario s, e.g. by pm_graph_build_mode) moves and computes, summed
 * over its nodes: each node's HBM bytes as pm_op_cost_compute counts them; a prefetch node's
 * bytes written to L2, a consumer's l2_bytes read from it; an allreduce's bytes sent per
 * device for the algorithm it runs (ring and twoshot 2(p-1)/p n, oneshot (p-1) n, tree
 * 2 ceil(log2 p) n, hierarchical per phase); flop / 2 MACs per operation (an allreduce's
 * additions are not counted). out is overwritten. Returns PM_OK, PM_ERR_INVALID_ARG or an
 * error of pm_op_cost_compute.
 */
PM_API pm_status pm_graph_traffic(const pm_scenario *s, const pm_graph *g, pm_traffic *out,
                                  pm_error *err);

/**
 * Static power of one device: energy.static_W + energy.leakage_W_per_mm2 x the modelled die
 * (pm_area_compute). Returns PM_OK, PM_ERR_INVALID_ARG (NULL), PM_ERR_MISSING (no energy
 * object, or leakage without area coefficients) or PM_ERR_RANGE (a coefficient that is not
 * finite and >= 0: hand-built accelerators; or every coefficient 0). err may be NULL.
 */
PM_API pm_status pm_static_power(const pm_accelerator *a, double *power_W, pm_error *err);

/**
 * Energy of traffic t moved in time_s (>= 0) on one device: HBM bytes x hbm_J_per_byte + L2
 * writes and reads x their energies + link bytes x link_J_per_byte + MACs x mac_J of their
 * datatype + static power x time_s; where a's L2 is a hardware cache in front of HBM
 * (prefetch_consumer PM_CONSUMER_STREAM), the HBM bytes that are not prefetches' reads (t's
 * hbm_bytes - l2_write_bytes) pass it too, each an L2 write and read. out is overwritten.
 * Returns PM_OK, PM_ERR_INVALID_ARG,
 * PM_ERR_RANGE (time_s, or a byte or MAC count of t, negative or not finite) or an error of
 * pm_static_power.
 */
PM_API pm_status pm_energy_compute(const pm_accelerator *a, const pm_traffic *t, double time_s,
                                   pm_energy *out, pm_error *err);

/**
 * The share x in [0, 1] of the nominal clock at which a phase of energy e over time_s (> 0)
 * would draw board_W (issue 47): the static power does not scale with the clock, the bytes'
 * power scales as x (the same bytes over a time 1 / x longer), the MACs' as x^3 (their rate x,
 * their energy ~ V^2 with V ~ f): e.static_J / t + (hbm_J + l2_J + link_J) / t x +
 * mac_J / t x^3 = board_W, found by bisection. 1 when e.total_J / time_s <= board_W (or board_W
 * or time_s is not > 0); 0 when the static power alone exceeds board_W.
 */
PM_API double pm_power_clock_frac(const pm_energy *e, double time_s, double board_W);

/**
 * Power of one device streaming HBM at its nominal bandwidth, every byte prefetched through
 * L2 (written and read back), with static power: the check against board power (a part whose
 * model exceeds its board power has energy coefficients too high). Errors as pm_static_power.
 */
PM_API pm_status pm_full_bandwidth_power(const pm_accelerator *a, double *power_W,
                                         pm_error *err);

/**
 * Gross dies of die_mm2 on a round wafer of wafer_diameter_mm: pi (d/2)^2 / A - pi d / sqrt(2 A)
 * (ttm-cas dies_per_wafer_area), fractional. Returns 0 when either argument is not > 0 or when
 * the edge loss leaves no die (the die is too large for the wafer).
 */
PM_API double pm_dies_per_wafer(double wafer_diameter_mm, double die_mm2);

/**
 * Yield of a die of die_mm2 at defect density d0_per_mm2: negative binomial (1 + A D0 /
 * alpha)^-alpha, Murphy ((1 - e^-AD0) / AD0)^2 (1 at AD0 = 0) or Poisson e^-AD0. alpha is read
 * by the negative binomial only. Returns NaN for an invalid model or negative, non-finite
 * arguments (alpha must be > 0 for the negative binomial).
 */
PM_API double pm_die_yield(pm_yield_model model, double die_mm2, double d0_per_mm2,
                           double alpha);

/**
 * Cost of one device: the die (wafer_usd / (dies per wafer x yield) for the modelled die, per
 * chiplet times dies_per_package when it is split), HBM
 * (usd per byte x hbm_capacity_bytes) and package. out is overwritten. Returns PM_OK,
 * PM_ERR_INVALID_ARG (NULL), PM_ERR_MISSING (no cost object or no area coefficients, the path
 * says which) or PM_ERR_RANGE (the die leaves no whole die on the wafer, or a coefficient out of
 * range in a hand-built accelerator). err may be NULL.
 */
PM_API pm_status pm_device_cost_compute(const pm_accelerator *a, pm_device_cost *out,
                                        pm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Design-space sweeps                                                                         */
/* ------------------------------------------------------------------------------------------ */

/** Axes a sweep can vary. */
typedef enum pm_axis_kind {
    PM_AXIS_L2 = 0,       /* L2 capacity, bytes */
    PM_AXIS_L2_BW = 1,    /* L2 bandwidth, bytes/s */
    PM_AXIS_COMPUTE = 2,  /* peak of the compute datatype, flop/s (other peaks scale with it) */
    PM_AXIS_HBM_BW = 3,   /* HBM bandwidth, bytes/s */
    PM_AXIS_LINK_BW = 4,  /* link bandwidth, bytes/s */
    PM_AXIS_DEVICES = 5,
    PM_AXIS_BATCH = 6,
    PM_AXIS_SEQ = 7,      /* total sequence length */
    PM_AXIS_EP = 8,       /* expert-parallel degree (cluster.expert_parallel) */
    PM_AXIS_PP = 9,       /* pipeline stages (cluster.pipeline_parallel) */
    PM_AXIS_DP = 10,      /* data-parallel replicas (cluster.data_parallel) */
    PM_AXIS_SP = 11,      /* sequence parallelism off (0) or on (1) (cluster.sequence_parallel) */
    PM_AXIS_SPLIT = 12,   /* the layers of the last of several pipeline stages (the one with the
                             LM head), the others sharing the rest evenly (cluster.pipeline_layers;
                             set after pp) */
    PM_AXIS_COUNT = 13
} pm_axis_kind;

/** "l2", "l2_bw", "compute", "hbm_bw", "link_bw", "devices", "batch", "seq", "ep", "pp", "dp",
 * "sp", "split". */
PM_API const char *pm_axis_name(pm_axis_kind kind);
/** The CSV column name with its unit: "l2_capacity_MiB", "hbm_bandwidth_GBps", "devices"... */
PM_API const char *pm_axis_column(pm_axis_kind kind);
/** True for the axes of counts (devices, batch, seq, ep, pp, dp, split) and the switch sp (0
 * or 1): integers, not searchable by pm_optimize_axis_for (pm_optimize_count searches pp, dp
 * and split); false for the continuous ones (and for a kind out of range). */
PM_API bool pm_axis_is_count(pm_axis_kind kind);
/** Converts an SI axis value to the unit of pm_axis_column. */
PM_API double pm_axis_display_value(pm_axis_kind kind, double value_si);

/** A parsed axis: its kind and its values (SI), in order. Free with pm_axis_release. */
typedef struct pm_axis {
    pm_axis_kind kind;
    double *values;
    size_t n_values;
    bool default_range;  /* given bare ("l2"): pm_axis_fit_scenario may refit it */
} pm_axis;

/**
 * Parses "AXIS" (a default range), "AXIS=START:STOP:STEP" (units accepted, e.g.
 * "l2=8MiB:256MiB:8MiB"; STEP "x2" makes a geometric range) or "AXIS=V1,V2,...". Integer axes
 * (devices, batch, seq) take counts ("16k"). At most max_points values (0: at most
 * PM_AXIS_MAX_POINTS; a range with more is refused before its values are held).
 * Returns PM_OK, PM_ERR_VALUE (unknown axis), PM_ERR_UNIT, PM_ERR_RANGE (empty or reversed
 * range, zero or negative step, non-integer count), PM_ERR_NOMEM. err->path names the option.
 */
PM_API pm_status pm_axis_parse(const char *spec, size_t max_points, pm_axis *out, pm_error *err);

/**
 * Fits an axis given bare (pm_axis_parse of "AXIS": default_range true) to scenario s: devices
 * and ep stop at the cluster's max_devices; a continuous axis whose default range misses the
 * scenario's own value (NVLink4's 450 GB/s against the default 25-400) runs from an eighth of
 * that value to twice it, x2 apart. Other axes are left as they are. Returns PM_OK,
 * PM_ERR_INVALID_ARG or PM_ERR_NOMEM (a left as it was).
 */
PM_API pm_status pm_axis_fit_scenario(const pm_scenario *s, pm_axis *a, pm_error *err);

/**
 * The scenario's own value along axis k, in SI (the compute axis: the peak of the workload's
 * compute datatype); false when it has none.
 */
PM_API bool pm_scenario_axis_value(const pm_scenario *s, pm_axis_kind k, double *v);
/** Frees the values of an axis of pm_axis_parse (not axis itself). axis may be NULL. */
PM_API void pm_axis_release(pm_axis *axis);

/**
 * Sets one axis of a scenario to value (SI). Returns PM_OK, PM_ERR_RANGE (not positive, not an
 * integer for count axes) or PM_ERR_INVALID_ARG; the scenario is then re-checked by the caller
 * through pm_estimate_compute.
 */
PM_API pm_status pm_scenario_set_axis(pm_scenario *s, pm_axis_kind kind, double value,
                                      pm_error *err);

/** Throughput density of one mode: tokens/s / (devices x die mm2). */
PM_API double pm_density(const pm_estimate *e, pm_mode mode, int devices, double die_mm2);

/* The sweep engine: evaluates the grid of up to PM_SWEEP_MAX_AXES axes on worker threads and
 * hands the points to a callback in grid order, a block at a time, so memory stays bounded
 * whatever the grid size. */

#define PM_SWEEP_MAX_AXES 4

/** One evaluated point. */
typedef struct pm_sweep_point {
    size_t index;                          /* row-major position in the grid (last axis fastest) */
    double axis_value[PM_SWEEP_MAX_AXES];  /* SI, in the order of the axes */
    pm_status status;                      /* PM_OK, or why the point is invalid */
    char error[240];                       /* the message when status != PM_OK */
    pm_estimate estimate;                  /* when status == PM_OK */
    double die_mm2;                        /* NaN when the accelerator has no area data */
    double density[PM_MODE_COUNT];         /* tokens/s/mm2 per mode, NaN likewise */
    double largest_die_mm2;                /* the package's largest die, which the reticle
                                              judges (NaN likewise) */
    bool area_present;                     /* area below holds the point's package */
    pm_area area;                          /* the package's blocks and dies */
} pm_sweep_point;

/** The scenario s itself as one point of no axis, from its estimate e (pm_estimate_compute):
 * the run CSV's row, in the sweep's columns (pm_sweep_point_values). pt is overwritten; its
 * status is PM_ERR_INVALID_ARG when s or e is NULL. */
PM_API void pm_sweep_point_of(const pm_scenario *s, const pm_estimate *e, pm_sweep_point *pt);

/** The most values one axis may have as the front ends parse them (pm_axis_parse's max_points;
 * the Python module also caps a whole grid at it). */
#define PM_AXIS_MAX_POINTS 10000000

/** The most worker threads a sweep runs (pm_sweep_opts.threads above it is refused; the
 * online CPUs are capped at it). */
#define PM_SWEEP_MAX_THREADS 256

/** How to run a sweep. Zero-initialised options: all CPUs, the whole grid. */
typedef struct pm_sweep_opts {
    int threads;          /* worker threads in [0, PM_SWEEP_MAX_THREADS]; 0: the online CPUs;
                             1: the calling thread only */
    size_t shard_index;   /* with shard_count > 1: evaluate only slice shard_index (0-based)... */
    size_t shard_count;   /* ...of shard_count contiguous slices of the row-major order */
    size_t block_points;  /* points per block (per callback call); 0: up to 1024, fewer for
                             small grids so that every thread has work */
    /* Optional: called with each block on the worker thread that evaluated it, before the block
     * reaches the in-order callback, concurrently with other workers and with that callback
     * (so it must be thread-safe): for work that may run out of order, such as formatting.
     * Non-zero stops the sweep as the callback's does. */
    int (*prepare)(const struct pm_sweep_point *points, size_t n, void *user);
} pm_sweep_opts;

/**
 * Receives n consecutive points of the slice, in grid order; the array is valid only during
 * the call. Runs on the calling thread of pm_sweep_run. Return non-zero to stop the sweep.
 */
typedef int (*pm_sweep_fn)(const pm_sweep_point *points, size_t n, void *user);

/**
 * The name among names[0..n) nearest to word by edit distance (Levenshtein) when it is near
 * enough to suggest ("did you mean"): at most 2 edits, or a third of word's length when word is
 * longer than 9 bytes (the rule of the library's own suggestions for unknown JSON keys). The
 * first of equally near names; NULL when none is near, or word or names is NULL (a NULL name
 * is skipped). For front ends that suggest options, commands or values.
 */
PM_API const char *pm_suggest(const char *word, const char *const *names, size_t n);

/** Number of result columns of a sweep point: the sweep CSV's columns after the axis columns
 * and before "error" (41 today; more may be added at the end, so that a column's position
 * stays). The last twelve: weight_bytes_per_device and kv_bytes_per_device (the estimate's),
 * fits_hbm (1 or 0), allreduce_decode_s (one decode allreduce), allreduces_per_step,
 * allreduce_per_step_s (their product: a decode step's allreduce time, serial), and the
 * prefill/decode split serial_prefill_s ... preserve_decode_s. */
PM_API size_t pm_sweep_column_count(void);
/** The name of result column i with its unit ("serial_request_s", "die_mm2",
 * "density_preserve_tokens_per_s_per_mm2"...); NULL when i >= pm_sweep_column_count(). */
PM_API const char *pm_sweep_column_name(size_t i);
/** Writes the first n result columns of point p into values (NaN for every column of an invalid
 * point, or for die_mm2 and the densities without area data) and returns
 * pm_sweep_column_count(). values may be NULL (n is then ignored); p NULL gives NaNs. */
PM_API size_t pm_sweep_point_values(const pm_sweep_point *p, double *values, size_t n);

/** Number of points of the grid (the product of the axis lengths); 0 when empty. */
PM_API size_t pm_sweep_size(const pm_axis *axes, size_t n_axes);

/** The i-th (from 0) of the warnings about a sweep of base over axes, the list a front end
 * gives in place of pm_scenario_warning's for base: base's warnings less those about a value
 * an axis replaces (its sequence length under a seq axis, its split under a devices or ep
 * axis), then in this order a seq axis that reaches beyond the model's
 * max_position_embeddings, and the points of the devices and ep axes (the grid of both where
 * the sweep has both) at which the model's heads, KV heads, MLP or expert columns do not
 * divide (under megatron sharding: the busiest device is modelled there); between them, an l2
 * or compute axis at some of whose values the modelled die is over the reticle
 * (PM_RETICLE_MM2). Writes it (at most n
 * bytes, NUL included; nothing when note is NULL) and returns true, or returns false when there
 * are at most i. */
PM_API bool pm_sweep_warning(const pm_scenario *base, const pm_axis *axes, size_t n_axes,
                             size_t i, char *note, size_t n);
/** pm_sweep_warning's warnings that its axes add (after base's own): a seq axis beyond the
 * model's context, a die over the reticle at some values of an l2 or compute axis (how many,
 * from which), the devices and ep axes' uneven splits; for a front end that said base's
 * warnings already (a pool swept along a co-design axis). */
PM_API bool pm_sweep_axes_warning(const pm_scenario *base, const pm_axis *axes, size_t n_axes,
                                  size_t i, char *note, size_t n);

/** What a sweep's results hold that a figure drawn from them does not show: the points that
 * are not valid and those whose weights and KV cache exceed the usable HBM (fits_hbm false),
 * with the first of each in grid order. Zero-initialise, then pm_sweep_tally_add each block of
 * points as the callback gets them. */
typedef struct pm_sweep_tally {
    size_t points;                             /* points added */
    size_t invalid;                            /* status != PM_OK */
    size_t unfit;                              /* valid, and estimate.fits_hbm false */
    double first_invalid[PM_SWEEP_MAX_AXES];   /* axis values (SI) of the first invalid point */
    char first_error[240];                     /* ...and its error */
    double first_unfit[PM_SWEEP_MAX_AXES];     /* axis values (SI) of the first unfit point */
} pm_sweep_tally;

/** Adds n points (in grid order) to t. Does nothing when t or pts is NULL. */
PM_API void pm_sweep_tally_add(pm_sweep_tally *t, const pm_sweep_point *pts, size_t n);

/** The i-th (from 0) warning of a sweep's tally over axes, the list a front end gives once the
 * sweep is done: the points that are not valid (how many, the first one's values and error),
 * then those whose weights and KV cache exceed the usable HBM (how many, the first one's
 * values), each only when there are some. Writes it as pm_sweep_warning does and returns true,
 * or returns false when there are at most i. */
PM_API bool pm_sweep_tally_warning(const pm_sweep_tally *t, const pm_axis *axes, size_t n_axes,
                                   size_t i, char *note, size_t n);

/** The row-major index range [*first, *last) of slice k of count (count >= 1, k < count):
 * consecutive slices differ in size by at most one point and cover the grid in order. */
PM_API void pm_sweep_slice(size_t total, size_t k, size_t count, size_t *first, size_t *last);

/**
 * Evaluates base with each combination of axis values (the axes must be different kinds).
 * Invalid points are reported in their point (status, error), not as a failure of the sweep.
 * Results are identical whatever the thread count. Returns PM_OK, PM_ERR_INVALID_ARG (NULL
 * arguments, no or too many axes, repeated axes, a bad slice), PM_ERR_NOMEM, or
 * PM_ERR_CANCELLED when the callback stopped the sweep.
 */
PM_API pm_status pm_sweep_run(const pm_scenario *base, const pm_axis *axes, size_t n_axes,
                              const pm_sweep_opts *opts, pm_sweep_fn fn, void *user,
                              pm_error *err);

/** What an optimum search maximises. Values are pinned. */
typedef enum pm_objective {
    PM_OBJECTIVE_MM2 = 0,   /* throughput density, tokens/s / (devices x die mm2) */
    PM_OBJECTIVE_USD = 1,   /* tokens/s / (devices x device usd): needs the "cost" object */
    PM_OBJECTIVE_JOULE = 2, /* generated tokens per joule: needs the "energy" object */
    PM_OBJECTIVE_COUNT = 3
} pm_objective;

/** "mm2", "usd", "joule" (the --objective spelling); "?" when invalid. */
PM_API const char *pm_objective_name(pm_objective objective);
/** The column of the objective's value with its unit: "density_tokens_per_s_per_mm2",
 * "tokens_per_s_per_usd", "tokens_per_J"; "?" when invalid. */
PM_API const char *pm_objective_column(pm_objective objective);

/** Result of an optimum search. */
typedef struct pm_optimum {
    double best_value[PM_MODE_COUNT];    /* axis value (SI) maximising the objective per mode */
    double best_density[PM_MODE_COUNT];  /* the objective there (tokens/s/mm2 for the density) */
    double bracket_lo[PM_MODE_COUNT], bracket_hi[PM_MODE_COUNT]; /* final bracket (SI) */
    int iterations[PM_MODE_COUNT];       /* Brent iterations after the grid scan */
    int evaluations;                     /* scenario evaluations in total */
    int at_edge[PM_MODE_COUNT];          /* -1 / +1: the best is the range's lower / upper end
                                            and the objective still rises toward it, so the
                                            optimum may lie beyond (widen the range); 0: an
                                            optimum inside the range, or a flat objective */
    /* The exhaustive search of a count axis (pm_optimize_count); zero from
     * pm_optimize_axis_for. There every value is the optimum of its own bracket:
     * bracket_lo = bracket_hi = best_value, iterations 0; at_edge as above, and only where the
     * axis goes on beyond the range's end in the scenario (pp beyond 1 or below the layers,
     * split below the most layers the last stage may hold, dp beyond 1). */
    bool exhaustive;                     /* every integer of [lo, hi] evaluated */
    double lo, hi;                       /* the range searched (SI) */
    double tie_rel_tol;                  /* the relative tie of the objectives (the caller's) */
    int ties[PM_MODE_COUNT];             /* the other values whose objective is within
                                            tie_rel_tol x the largest: best_value is the
                                            smallest of these values, best_density its own */
    bool fits_hbm[PM_MODE_COUNT];        /* the weights and KV cache per device fit the usable
                                            HBM at best_value (pm_estimate's fits_hbm) */
    int skipped;                         /* values the scenario refused (in evaluations) */
    double first_skipped;                /* the first of them (SI)... */
    char first_skipped_error[480];       /* ...and why ("$.path: message") */
} pm_optimum;

/**
 * Finds, for each mode, the value of a continuous axis (l2, l2_bw, compute, hbm_bw, link_bw)
 * in [lo, hi] that maximises throughput density. The objective is piecewise, so a grid of
 * grid_points (>= 3) log-spaced points brackets the best point first, then GSL's Brent
 * minimiser refines it until the bracket is narrower than rel_tol x value or max_iter
 * iterations. Returns PM_OK, PM_ERR_INVALID_ARG, PM_ERR_MISSING (no area coefficients) or any
 * error of pm_estimate_compute.
 */
PM_API pm_status pm_optimize_axis(const pm_scenario *s, pm_axis_kind kind, double lo, double hi,
                                  int grid_points, double rel_tol, int max_iter, pm_optimum *out,
                                  pm_error *err);

/**
 * pm_optimize_axis for any objective: throughput density per mm2 (PM_OBJECTIVE_MM2, what
 * pm_optimize_axis maximises), tokens/s per dollar of the devices (PM_OBJECTIVE_USD) or tokens
 * per joule (PM_OBJECTIVE_JOULE). A larger L2 costs area, dollars (the die cost grows faster
 * than its area) and static power (leakage per mm2), so each objective has its own optimum.
 * Returns the errors of pm_optimize_axis, and PM_ERR_MISSING with the path of the object the
 * objective needs ("$.accelerator.cost", "$.accelerator.energy") when the accelerator lacks it.
 */
PM_API pm_status pm_optimize_axis_for(const pm_scenario *s, pm_axis_kind kind,
                                      pm_objective goal, double lo, double hi,
                                      int grid_points, double rel_tol, int max_iter,
                                      pm_optimum *out, pm_error *err);

/** The grid the front ends bracket [lo, hi] with (pm_optimize_axis_for's grid_points): log
 * steps of 1 % at most, at least 33 points, at most 4001. The objective rises in steps (the
 * capacities where Algorithm 1 fits another prefetch) and falls with the area between them, so
 * a coarser grid can step over the best step (a 33-point grid over 8-512 MiB of L2 on
 * qwen3-30b-a3b bracketed 29 MiB where 43.9 MiB is better); a step narrower than the grid's can
 * still be missed. */
PM_API int pm_optimize_grid_points(double lo, double hi);

/** The relative difference under which the front ends call two objectives of a count axis a
 * tie (pm_optimize_count's tie_rel_tol): far above the rounding of equal figures reached
 * by different products (dp replicas scale tokens/s and devices alike: a few ulps, 1e-16),
 * far below any difference the model makes between two plans. */
#define PM_OPTIMIZE_TIE_REL_TOL 1e-9

/**
 * Finds, for each mode, the value of a count axis (PM_AXIS_PP, PM_AXIS_DP or PM_AXIS_SPLIT) in
 * [lo, hi] that maximises goal (pm_optimize_axis_for's objectives), exactly: every integer of
 * the range evaluated (pm_scenario_set_axis, then pm_estimate_compute). A value the scenario
 * refuses (a split the stages cannot hold, stages the cluster's nodes cannot place, more stages
 * than layers) is skipped and counted, the first with its error (out->skipped,
 * first_skipped, first_skipped_error). The best of a mode is the smallest value whose
 * objective is within tie_rel_tol (relative, in [0, 1)) of the largest: ties go to the smaller
 * value, and out->ties counts the other values of the tie (dp's densities are flat: replicas
 * multiply tokens/s, devices, dollars and joules alike, so every dp ties). lo = hi = 0 searches
 * the axis's own range in s: pp 1 to the layers (at most PM_MAX_STAGES), split 1 to the layers
 * less one per other stage, dp 1 to 8 (the dp sweep's default); otherwise 1 <= lo <= hi,
 * integers, within the axis's bounds (pm_scenario_set_axis's). pm_optimum_warning says the
 * ties, the skipped values and a best that does not fit the HBM. Returns PM_OK,
 * PM_ERR_INVALID_ARG, PM_ERR_MISSING (as pm_optimize_axis_for), PM_ERR_NOMEM, or the first
 * refusal's status when every value is refused (err: its path, and the range).
 */
PM_API pm_status pm_optimize_count(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                                   double lo, double hi, double tie_rel_tol, pm_optimum *out,
                                   pm_error *err);

/**
 * Parses an optimum search's "AXIS" (the axis's default sweep range) or "AXIS=LO:HI" (each
 * read as the axis reads a value: bare in its column's unit, or with a unit) into the axis and
 * its range (SI), for the CLI's --optimize and the Python module's optimize(). The continuous
 * axes (pm_axis_is_count false, for pm_optimize_axis_for) and the counts pp, dp and split (for
 * pm_optimize_count: a bare one gives lo = hi = 0, the axis's own range in the scenario).
 * Returns PM_OK, PM_ERR_VALUE (an unknown axis, with the nearest, or another count axis),
 * PM_ERR_UNIT or PM_ERR_RANGE (HI not above LO).
 */
PM_API pm_status pm_optimize_spec_parse(const char *spec, pm_axis_kind *kind, double *lo,
                                        double *hi, pm_error *err);

/**
 * Warning i (0-based) of an optimum search's result, in order: a mode whose best is an end of
 * the range with the objective still rising toward it (unless the next rule says why), then a mode
 * whose best l2 or compute makes a die over the reticle, then, per mm2 or per dollar, a mode whose
 * best on a bandwidth
 * axis (hbm_bw, l2_bw, link_bw: they move no die area and no price) is above the chip's own
 * bandwidth; of a count axis's (pm_optimize_count) then a mode whose best
 * ties with other values, the values skipped (how many, the first and why), and a mode whose
 * best does not fit the usable HBM. Writes it into note (n bytes, may be NULL) and returns
 * true; false past the last.
 */
PM_API bool pm_optimum_warning(const pm_scenario *s, pm_axis_kind kind, pm_objective goal,
                               const pm_optimum *opt, size_t i, char *note, size_t n);


/* ---------------------------------------------------------------- disaggregated serving */

/** The link between a prefill and a decode pool that carries each request's KV cache. Each
 * device of a prefill instance sends its share of the cache over its own link. */
typedef struct pm_disagg_link {
    double bandwidth_bytes_per_s; /* per prefill device (> 0; INFINITY: an ideal link), shared
                                     among the transfers in flight on it */
    double latency_s;             /* start-up latency of one transfer, alpha (>= 0) */
    bool layer_streamed;          /* each layer's KV is sent as soon as the prefill has computed
                                     it (only about one layer's share is exposed), else the whole
                                     cache after the prefill */
} pm_disagg_link;

/**
 * A disaggregated deployment's workload: prompts prefilled on prefill instances (one at a time
 * each), their KV cache sent to a decode instance, which decodes output_tokens - 1 tokens in
 * decode-only steps.
 */
typedef struct pm_disagg_workload {
    int64_t input_tokens;      /* prompt length (>= 1) */
    int64_t output_tokens;     /* tokens per request (>= 2), the first by the prefill pool */
    double decode_concurrency; /* sequences in flight on one decode instance at full load (>= 1;
                                  0: the most its HBM holds) */
    double request_rate_per_s; /* > 0: the deployment serves this rate with the fewest devices;
                                  0: the instance ratio of the most throughput per device */
    int prefill_instances;     /* > 0 with decode_instances > 0: the counts fixed (no search) */
    int decode_instances;
    int max_instances;         /* the search's bound per pool (1 .. PM_DISAGG_MAX_INSTANCES) */
    double prefill_max_load_frac; /* (0, 1]: the most a prefill instance is loaded (its queue
                                     grows without bound at 1; aiconfigurator derates to 0.9) */
    double ttft_limit_s, tpot_limit_s; /* limits for goodput (0: none) */
    pm_disagg_link link;
} pm_disagg_workload;

/** The most instances of one pool a deployment searches. */
#define PM_DISAGG_MAX_INSTANCES 4096

/** A disaggregated deployment in one mode (seconds; rates per second; both pools' devices). */
typedef struct pm_disagg_mode {
    double prefill_s;          /* one prompt's prefill on a prefill instance, D */
    double queue_s;            /* its mean wait, M/D/1: rho D / (2 (1 - rho)) */
    double transfer_s;         /* the KV transfer's exposed time after the prefill */
    double ttft_s;             /* prefill_s + queue_s + transfer_s */
    double decode_step_s;      /* a decode-only step at decode_in_flight sequences */
    double tpot_s;             /* = decode_step_s / E (E = 1 without speculation) */
    double e2e_s;              /* ttft_s + (output_tokens - 1) tpot_s */
    double decode_in_flight;   /* sequences one decode instance holds at the deployment's rate */
    double prefill_requests_per_s; /* one prefill instance at its load cap: prefill_max_load_frac
                                      of the prompts it prefills or, if fewer, of the caches its
                                      KV link carries (bandwidth / transfer bytes per device) */
    double decode_requests_per_s;  /* one decode instance at decode_concurrency */
    int prefill_instances, decode_instances;
    double devices;            /* both pools' */
    double prefill_load_frac;  /* rho of a prefill instance */
    double requests_per_s;     /* the deployment's */
    double tokens_per_s;       /* output tokens */
    double tokens_per_s_per_device;
    double tokens_per_s_per_user; /* 1 / tpot_s */
    double tokens_per_s_per_mm2;  /* per mm2 of both pools' dies (0 without both area blocks) */
    double tokens_per_s_per_usd;  /* per dollar of both pools' devices (0 without cost blocks) */
    double energy_per_token_J;    /* busy energy of both pools per output token (0 without
                                     energy blocks) */
    double tokens_per_J;
    double prefill_tokens_per_s_per_mm2; /* prompt tokens/s of one prefill instance at its load
                                            cap per mm2 of its dies (0 without an area block) */
    double decode_tokens_per_s_per_mm2;  /* output tokens/s of one decode instance at
                                            decode_concurrency per mm2 of its dies */
    bool meets_limits;
    double goodput_tokens_per_s_per_device; /* tokens_per_s_per_device within the limits */
    bool saturated;            /* the target rate needs more than max_instances of a pool, or the
                                  link cannot carry it: latencies NaN */
} pm_disagg_mode;

typedef struct pm_disagg_result {
    pm_disagg_mode modes[PM_MODE_COUNT];
    double kv_bytes_per_request;    /* the whole model's cache of one prompt (all layers, all
                                       KV heads or MLA's latent, windows applied) */
    double transfer_bytes_per_device; /* what each prefill device sends */
    double decode_concurrency;      /* the decode instance's full load (given or the HBM's) */
    double decode_max_concurrency;  /* the most sequences its HBM holds */
    int prefill_devices, decode_devices; /* per instance */
    double prefill_die_mm2, decode_die_mm2; /* 0 without an area block */
} pm_disagg_result;

/**
 * A disaggregated deployment: prefill instances of scenario prefill and decode instances of
 * scenario decode (each one tensor-parallel group; the same model and KV datatype), joined by
 * w->link. KV bytes per request: pm_footprint_compute's cache of the whole model (every KV head
 * once, or MLA's latent) at input_tokens. A prefill instance serves one prompt at a time in D
 * (pm_mixed_step_time of one whole prompt): at rate lambda = rate / x its load is rho = lambda D
 * and the TTFT is D + rho D / (2 (1 - rho)) (DistServe's M/D/1) plus the transfer: each prefill
 * device sends b = kv / devices bytes over its link of bandwidth B, shared by the c = max(1,
 * lambda alpha / (1 - lambda b / B)) transfers in flight (Little's law), X = b c / B; exposed
 * alpha + X whole, alpha + max(X / L, X - D (L - 1) / L) layer-streamed over L layers. A decode
 * instance runs decode-only steps of n sequences at the mean context input + (output - 2) / 2
 * (n the given or the HBM's most at full load; at a lower rate the n with n = lambda_d (output
 * - 1) t(n)): TPOT = t(n). Rate matching: a prefill instance serves load_frac / D requests/s,
 * a decode instance N / ((output - 1) t(N)); at a target rate the fewest of each that serve it,
 * else the counts up to max_instances maximising min(x R_p, y R_d) / (x g_p + y g_d). Every
 * mode side by side. Returns PM_OK, PM_ERR_INVALID_ARG (NULL, a length, count, load or link
 * out of range), PM_ERR_INCONSISTENT (different models or KV datatypes in the pools, err->path
 * "decode.model" or "decode.workload.kv_dtype"; a pool whose HBM does not hold the weights and
 * one sequence, "prefill.accelerator.hbm_capacity_GiB" or "decode.accelerator.hbm_capacity_GiB";
 * a decode_concurrency above the HBM's most, "decode_concurrency"), or an error of
 * pm_scenario_check, pm_mixed_step_time or the area, cost and energy models (a pool's own
 * error's message opens with "prefill pool: " or "decode pool: ").
 * Speculative decoding (both scenarios' speculative blocks alike, else PM_ERR_UNSUPPORTED at
 * "prefill.speculative"): a decode step is the verify step (k + 1 tokens per sequence) plus
 * the draft's steps (speculate.c), a request takes (output - 1) / E of them (TPOT = t(n) / E),
 * the draft's weights and cache (and k drafted positions) count in the decode pool's HBM, and
 * the prefill pool computes the draft's cache of the prompt (in D and in the bytes sent).
 */
PM_API pm_status pm_disagg_compute(const pm_scenario *prefill, const pm_scenario *decode,
                                   const pm_disagg_workload *w, pm_disagg_result *out,
                                   pm_error *err);
/** The link inference-sim times a KV transfer over (pd_events.go: 0.05 ms + bytes / 25 GB/s;
 * reference serving-parallelism.md section 4), where the prefill cluster names no inter-node
 * link. */
#define PM_DISAGG_LINK_BYTES_PER_S 25e9
#define PM_DISAGG_LINK_LATENCY_S 50e-6
/** Fills what w leaves to the prefill scenario: input_tokens and output_tokens where 0 (its
 * prompt and its decode steps, at least 2), the link's bandwidth and latency where NaN (the
 * prefill cluster's inter-node link where it names one, else PM_DISAGG_LINK_*): the disagg
 * command's and the Python module's defaults, one rule. */
PM_API void pm_disagg_workload_defaults(const pm_scenario *prefill, pm_disagg_workload *w);
/** Whether w's requests (its lengths, after pm_disagg_workload_defaults) reach past the trained
 * context of the pools' model (pm_serve_workload_warning of the prefill scenario: both pools
 * run one model), the warning into note (n bytes; may be NULL). */
PM_API bool pm_disagg_workload_warning(const pm_scenario *prefill, const pm_disagg_workload *w,
                                       char *note, size_t n);
/** The columns of a disaggregated point (docs/output-format.md), as the disagg command's CSV
 * and the Python module's disagg() name them. */
PM_API size_t pm_disagg_column_count(void);
/** The name of column i; NULL when i >= pm_disagg_column_count(). */
PM_API const char *pm_disagg_column_name(size_t i);
/** Writes the first n columns of r into values (NaN for the figures without data) and returns
 * pm_disagg_column_count(); values may be NULL. */
PM_API size_t pm_disagg_point_values(const pm_disagg_result *r, double *values, size_t n);
/** A co-located deployment's tokens per step where the caller gives none (the disagg command's
 * --chunk default). */
#define PM_DISAGG_COLOCATED_CHUNK 2048
/**
 * The co-located deployment a disaggregated one is compared with (the disagg command's and the
 * Python module's colocated columns): scenario s (either pool's chip, one tensor-parallel
 * group) serving w's lengths under w's limits at `concurrency` sequences (the disaggregated
 * result's decode_concurrency), decode-first, staggered, chunk tokens a step (0:
 * PM_DISAGG_COLOCATED_CHUNK; raised to concurrency + 1 where it holds no prompt token beside a
 * step's decodes), by pm_serve_compute. Returns its status (PM_ERR_INVALID_ARG for NULL or a
 * negative chunk).
 */
PM_API pm_status pm_disagg_colocated(const pm_scenario *s, const pm_disagg_workload *w,
                                     double concurrency, int64_t chunk, pm_serve_result *out,
                                     pm_error *err);
/** The figures of a co-located deployment, per mode: the colocated_CHIP_MODE_FIELD columns of
 * the disagg CSV and the fields of its JSON objects. */
#define PM_DISAGG_COLOCATED_FIELDS 5
/** The name of figure k ("tokens_per_s_per_device", ...); NULL when k >=
 * PM_DISAGG_COLOCATED_FIELDS. */
PM_API const char *pm_disagg_colocated_field_name(size_t k);
/** Mode m's figures of r into v (PM_DISAGG_COLOCATED_FIELDS values): tokens/s per device, per
 * user and per mm2, TTFT and TPOT; all NaN where r is NULL (no deployment) or its cache does
 * not fit the HBM, per mm2 NaN without an area block. */
PM_API void pm_disagg_colocated_values(const pm_serve_result *r, pm_mode m, double *v);

/** Which pool of a disaggregated deployment a co-design sweep varies. */
typedef enum pm_disagg_pool {
    PM_DISAGG_PREFILL = 0,
    PM_DISAGG_DECODE = 1,
    PM_DISAGG_POOL_COUNT
} pm_disagg_pool;

/** One point of a co-design sweep: the pool's chip at value along the axis. */
typedef struct pm_disagg_codesign_point {
    double value;              /* SI, along the axis */
    pm_disagg_result result;   /* the deployment with that pool's chip changed */
    pm_status status;          /* PM_OK, or why this point has no result (its pool does not
                                  fit, ...): the others still count */
} pm_disagg_codesign_point;

/** Whether a co-design sweeps axis: a pool's chip (PM_AXIS_L2, PM_AXIS_L2_BW, PM_AXIS_COMPUTE
 * or PM_AXIS_HBM_BW). */
PM_API bool pm_disagg_codesign_axis(pm_axis_kind axis);

/**
 * Co-design: the chip of one pool swept along axis (pm_disagg_codesign_axis;
 * pm_scenario_set_axis's rules), the other pool as it is. points[i] receives the
 * deployment at values[i]; *best the index of the point with the most of that pool's own
 * density in PRESERVE (prefill_tokens_per_s_per_mm2 or decode_tokens_per_s_per_mm2: the
 * decode pool's at w's decode concurrency), among the points whose deployment meets w's TTFT
 * and TPOT limits (the interactivity asked for), -1 when no point has one.
 * Returns PM_OK, PM_ERR_INVALID_ARG (NULL, no values, another axis or pool) or an error of
 * pm_disagg_compute at the pools as given.
 */
PM_API pm_status pm_disagg_codesign(const pm_scenario *prefill, const pm_scenario *decode,
                                    const pm_disagg_workload *w, pm_disagg_pool pool,
                                    pm_axis_kind axis, const double *values, size_t n,
                                    pm_disagg_codesign_point *points, int *best, pm_error *err);
/**
 * Warning i (0-based) of a co-design's best: chip the pool's scenario as given (the one swept),
 * points[0..n_points) and best pm_disagg_codesign's answer along axis. In order: the best's die
 * over the reticle (PM_RETICLE_MM2: that chip cannot be built), then the best's bandwidth above
 * chip's along hbm_bw or l2_bw (axes that move no die area and no price: the per-mm2 density
 * took that bandwidth as free); the texts of pm_search_warning's. Writes it into note (n bytes,
 * may be NULL) and returns true; false past the last (or with no best).
 */
PM_API bool pm_disagg_codesign_warning(const pm_scenario *chip, pm_axis_kind axis,
                                       const pm_disagg_codesign_point *points, size_t n_points,
                                       int best, size_t i, char *note, size_t n);
/** "prefill" or "decode"; "?" when out of range. */
PM_API const char *pm_disagg_pool_name(pm_disagg_pool pool);
/* ---- The search under latency limits (search.c) ---- */

/** Values one dimension of a search space holds at most. */
#define PM_SEARCH_MAX_VALUES 64
/** Hardware axes a search crosses at most. */
#define PM_SEARCH_MAX_HW 2

/** What a search maximises, per mode. Values are pinned. */
typedef enum pm_search_objective {
    PM_SEARCH_PER_DEVICE = 0, /* output tokens/s per device */
    PM_SEARCH_PER_MM2 = 1,    /* ... per device and mm2 of its die: needs the area block */
    PM_SEARCH_PER_USD = 2,    /* ... per dollar of the devices: needs the cost block */
    PM_SEARCH_PER_JOULE = 3,  /* output tokens per joule: needs the energy block */
    PM_SEARCH_OBJECTIVE_COUNT
} pm_search_objective;

/** The limit a candidate misses, or what stops the best one of its deployment (at the next
 * concurrency of the space). Values are pinned. */
typedef enum pm_search_bound {
    PM_BOUND_NONE = 0,       /* meets every limit */
    PM_BOUND_TTFT = 1,       /* time to first token above the limit */
    PM_BOUND_TPOT = 2,       /* time per output token above the limit */
    PM_BOUND_USER_RATE = 3,  /* tokens/s per user below the floor */
    PM_BOUND_HBM = 4,        /* the sequences' cache does not fit beside the weights */
    PM_BOUND_BUDGET = 5,     /* decode-first: the chunk budget leaves no room for a prompt */
    PM_BOUND_PEAK = 6,       /* the next concurrency meets the limits, the objective falls */
    PM_BOUND_SPACE = 7,      /* the largest concurrency of the space */
    PM_BOUND_COUNT
} pm_search_bound;

/**
 * A search's space and limits. The deployments: each tensor-parallel degree of tp (when n_tp
 * is 0: 1, 2, 4... up to a node, pm_cluster_node_devices, and the budget) with each count of
 * pipeline stages of pp (when n_pp is 0: 1, the search of one stage) and each expert-parallel
 * rank count of ep (the scenario's when n_ep is 0), and with a device budget the replicas that
 * fill it (dp = budget / (tp x pp), which must divide it; per-device figures are one
 * replica's, the deployment's rate dp times it). A deployment whose plan cannot be placed
 * (pm_pipeline_plan over its dp replicas: stages across nodes without an inter-node link, more
 * nodes than cluster.nodes, more stages than layers) is counted as an invalid plan. Each
 * deployment at each chunk budget and each point of the hardware axes (l2, l2_bw, compute,
 * hbm_bw, link_bw; values in SI) is one group, served at each concurrency (sequences in flight
 * per replica) as pm_serve_compute serves `workload` (its lengths, rule and arrival; its
 * concurrency and chunk budget are the space's).
 */
typedef struct pm_search_spec {
    pm_serve_workload workload;
    int device_budget;       /* devices of the deployment (0: one replica) */
    int tp[PM_SEARCH_MAX_VALUES];
    int n_tp;
    int pp[PM_SEARCH_MAX_VALUES]; /* pipeline stages, 1 to PM_MAX_STAGES */
    int n_pp;                /* 0: {1} */
    int ep[PM_SEARCH_MAX_VALUES];
    int n_ep;
    double concurrency[PM_SEARCH_MAX_VALUES];
    int n_concurrency;       /* >= 1 */
    int64_t chunk[PM_SEARCH_MAX_VALUES];
    int n_chunk;             /* >= 1 */
    pm_axis hw[PM_SEARCH_MAX_HW];
    int n_hw;
    double ttft_limit_s;     /* 0: none */
    double tpot_limit_s;     /* 0: none */
    double min_tokens_per_s_per_user; /* 0: none */
    pm_search_objective objective;
    bool exhaustive;         /* every candidate evaluated: the pruning's check */
    int threads;             /* 0: the online CPUs */
    /* Optional: called after each group, from the worker that ran it, under the search's lock
     * (keep it short): groups done of total. */
    void (*progress)(size_t done, size_t total, void *user);
    void *progress_user;
    /* Optional: evaluate only slice shard_index (0-based) of shard_count of the groups (the
     * deployments x chunk budgets x hardware points, in the space's order; pm_sweep_slice's
     * slices); 0 0: all. The shards' results, merged in order with pm_search_merge, are the
     * whole search's. */
    size_t shard_index, shard_count;
    /* Optional (issue 46 item 1): disaggregated deployments as candidates beside the
     * co-located ones. Each split of the device budget (> 0) into a prefill pool of
     * prefill_instances x TP p devices and a decode pool of decode_instances x TP d devices
     * (p and d from tp; prefill_instances x p + decode_instances x d = device_budget), at each
     * expert-parallel count of ep and each hardware point (both pools the same chip), is one
     * group, served by pm_disagg_compute at each concurrency (sequences per decode instance at
     * full load) with the counts fixed, the workload's lengths and the spec's limits. No chunk
     * budgets or stages (a pool is one tensor-parallel group). */
    bool disagg;
    pm_disagg_link disagg_link;  /* the link between the pools; bandwidth 0: the cluster's
                                    inter-node link (its bandwidth and latency), else
                                    PM_DISAGG_LINK_* (pm_disagg_workload_defaults) */
    double disagg_max_load_frac; /* a prefill instance's most load, (0, 1] (the disagg command's
                                    default 0.9, aiconfigurator's) */
} pm_search_spec;

/** One candidate: a deployment at a chunk budget, hardware point and concurrency, in a mode. */
typedef struct pm_search_candidate {
    int tp, ep, dp;          /* ep: the expert-parallel ranks (pm_cluster_ep: 1 for a dense
                                model) */
    int pp;                  /* pipeline stages of a replica (tp x pp devices) */
    int64_t chunk;
    double hw[PM_SEARCH_MAX_HW]; /* SI, in the order of the spec's axes */
    double concurrency;      /* sequences in flight per replica */
    pm_mode mode;
    pm_serve_mode figures;   /* one replica's steady state */
    double objective;
    pm_search_bound fails;   /* PM_BOUND_NONE: it meets the limits */
    size_t group;            /* its group's index in the space's order (tp, pp, ep, chunk,
                                hardware points, the last fastest; then the disaggregated
                                groups: split, ep, hardware points): with concurrency, its
                                place */
    /* A disaggregated candidate (spec->disagg): its pools, all > 0; all 0 for a co-located one.
     * It then has tp 0, pp 1, dp 1 (figures are the whole deployment's), chunk 0, ep the
     * pools', and concurrency the sequences per decode instance at full load. */
    int prefill_tp, prefill_instances, decode_tp, decode_instances;
} pm_search_candidate;

/** A search's answer. Free its fronts with pm_search_result_free. */
typedef struct pm_search_result {
    bool found[PM_MODE_COUNT];               /* some candidate meets the limits */
    pm_search_candidate best[PM_MODE_COUNT]; /* the most objective within the limits (among
                                                equals the most tokens/s per user, then the
                                                first in the space's order: on the front) */
    pm_search_bound binds[PM_MODE_COUNT];    /* what stops the best's deployment from serving
                                                more: the next concurrency's missed limit */
    pm_search_candidate *front[PM_MODE_COUNT]; /* the Pareto front within the limits: no other
                                                  candidate has both more objective and more
                                                  tokens/s per user; by rising per-user rate */
    size_t n_front[PM_MODE_COUNT];
    size_t candidates;       /* points of the space (each in every mode) */
    size_t evaluated;        /* steady states computed */
    size_t pruned;           /* points cut by the bounds (0 when exhaustive) */
    size_t invalid_plans;    /* groups whose deployment cannot run */
    char first_invalid[240]; /* the first one's error */
    size_t groups;           /* groups of the whole space (deployments x chunks x hardware) */
    size_t first_group, last_group; /* the groups evaluated: [first, last) (a shard's slice) */
    size_t outside;          /* points not served: decode-first at a concurrency that reaches
                                the chunk budget (no room for a prompt), or a wave whose
                                prompts need more than one step; not in evaluated or pruned */
} pm_search_result;

/**
 * Searches the space for the best candidate per mode within the limits, and the Pareto front.
 * The pruning (off when spec->exhaustive): a group's concurrencies are scanned upwards and cut
 * after the first one whose cache does not fit the HBM (the cache grows with the sequences in
 * flight; a missed TPOT limit or per-user floor cuts nothing: TPOT can fall as the concurrency
 * rises, a GEMM's last wave filled); the answer is the exhaustive one (a test checks it). Decode-
 * first points whose concurrency reaches the chunk budget, or (a wave) whose prompts the
 * budget does not hold in one step, are outside the space in both (counted in outside). Groups
 * run on threads; the result does not depend on their count. Returns PM_OK (found false for a
 * mode nothing meets), PM_ERR_INVALID_ARG (a list out of range, a count axis as hardware, a
 * request rate), PM_ERR_MISSING (the objective's block), PM_ERR_UNSUPPORTED (a scenario of
 * several stages or replicas: the spec's pp list and budget give them; or one that
 * speculates) or PM_ERR_NOMEM. A deployment that cannot run is counted in
 * invalid_plans with its error, not a failure. With spec->disagg, the disaggregated groups
 * follow the co-located ones and are pruned by the same rules (a concurrency whose pools do not
 * fit their HBM, pm_disagg_compute's refusals at "decode_concurrency" and the pools'
 * "hbm_capacity_GiB", ends the group as the HBM does; so does one at which every mode misses
 * TPOT or the per-user floor: at a larger decode concurrency TPOT does not fall); and the
 * search also returns PM_ERR_INVALID_ARG (no device budget, err->path "device_budget"; a
 * workload, link or load pm_disagg_compute refuses, its key), PM_ERR_UNSUPPORTED (what a
 * disaggregated deployment does not model: two or more length classes, "workload.classes" (one
 * class is its length); a wave, "workload.arrival"; data-parallel attention,
 * "$.cluster.attention_data_parallel") or
 * PM_ERR_MISSING (no link given and none between the cluster's nodes,
 * "$.cluster.inter_node_bandwidth_Gbps").
 */
PM_API pm_status pm_search_run(const pm_scenario *s, const pm_search_spec *spec,
                               pm_search_result *out, pm_error *err);
/**
 * Adds the result of the next shard of a search (spec->shard_index one more than the last
 * added; into zeroed before the first) to into: the counts summed, each mode's best the
 * larger objective (then the more tokens/s per user; the earlier shard's among equals, as the
 * space's order has it), the first
 * invalid deployment's error the earliest, the fronts joined and made Pareto again. Merged in
 * shard order, the shards of a search give exactly its unsharded result (tests/test_search.c).
 * Returns PM_OK, PM_ERR_INVALID_ARG (a part that does not follow into's last group) or
 * PM_ERR_NOMEM (into is left as it was).
 */
PM_API pm_status pm_search_merge(pm_search_result *into, const pm_search_result *part,
                                 pm_error *err);
/** Frees the fronts of r (not r itself); r may be NULL. */
PM_API void pm_search_result_free(pm_search_result *r);
/**
 * A candidate's layout: "colocated", or "P<x>xTP<p>+D<y>xTP<d>" for a disaggregated one (x
 * prefill instances of TP p, y decode instances of TP d). Writes at most n bytes of buf
 * (NUL-terminated when n > 0) and returns the length of the whole text, as snprintf.
 */
PM_API size_t pm_search_layout(const pm_search_candidate *k, char *buf, size_t n);
/**
 * The i-th warning (from 0) of search r of s over spec sp: where its chip cannot be built or
 * is not priced. A hardware axis (l2 or compute) whose values grow the modelled die past the
 * reticle (PM_RETICLE_MM2: how many values, from which), then each mode whose best is at such
 * a point (the search is over the modelled objective, buildable or not: a best there is said,
 * never left to be read as a chip), then, with a per-mm2 or per-dollar objective, each mode
 * whose best has more bandwidth than s's chip along hbm_bw, l2_bw or link_bw (axes that move
 * no die area and no price: that bandwidth was taken as free), then each mode whose best runs
 * a replica or pool of a TP (and EP) over which the model does not split evenly (the busiest
 * device's share modelled, as run and serve warn of a scenario's own). Writes it into note (n
 * bytes, may be NULL) and returns true; false past the last.
 */
PM_API bool pm_search_warning(const pm_scenario *s, const pm_search_spec *sp,
                              const pm_search_result *r, size_t i, char *note, size_t n);
/** "device", "mm2", "usd", "joule" (the --objective spelling), or "?". */
PM_API const char *pm_search_objective_name(pm_search_objective o);
/** "none", "ttft", "tpot", "tokens_per_user", "hbm", "chunk_budget", "objective_peak",
 * "space_edge", or "?". */
PM_API const char *pm_search_bound_name(pm_search_bound b);

/* ---- A search over a mix of models and workloads (search_mix.c) ---- */

/** Members a mix holds at most. */
#define PM_SEARCH_MAX_MEMBERS 8

/** One member of a mix: a scenario (its model, its chip) searched under its own spec (its
 * workload's lengths, deployments (TP, pipeline stages: spec.pp, EP), limits; no hardware axes
 * of its own: the mix's apply), with its share of the output tokens the fleet serves. */
typedef struct pm_search_member {
    const pm_scenario *scenario;
    pm_search_spec spec;     /* n_hw 0, the mix's objective, no shard; disagg: its
                                disaggregated deployments among its candidates */
    double share;            /* > 0; the shares are normalised over the members */
} pm_search_member;

/** A mix: members served by one chip design at each point of the hardware axes. */
typedef struct pm_search_mix {
    pm_search_member member[PM_SEARCH_MAX_MEMBERS];
    int n_members;           /* 1 .. PM_SEARCH_MAX_MEMBERS */
    pm_axis hw[PM_SEARCH_MAX_HW];
    int n_hw;                /* 0: the chips as their scenarios give them */
    pm_search_objective objective;
} pm_search_mix;

/** One hardware point of a mix, per mode. */
typedef struct pm_search_mix_point {
    double hw[PM_SEARCH_MAX_HW];        /* SI, in the order of the mix's axes */
    bool found[PM_MODE_COUNT];          /* every member has a candidate within its limits */
    double objective[PM_MODE_COUNT];    /* the mix's: 1 / sum_i (share_i / objective_i) */
    int missing[PM_MODE_COUNT];         /* found false: the first member nothing of meets its
                                           limits; -1 when found */
} pm_search_mix_point;

/** A mix's answer. Free it with pm_search_mix_result_free. */
typedef struct pm_search_mix_result {
    size_t n_points;                    /* the hardware points, the last axis fastest */
    int n_members;
    pm_search_mix_point *points;
    /* Member i's best at point p in mode m (valid where the member found one):
     * members[(p * n_members + i) * PM_MODE_COUNT + m]; binds likewise. */
    pm_search_candidate *members;
    pm_search_bound *binds;
    bool found[PM_MODE_COUNT];          /* some point serves every member within its limits */
    size_t best[PM_MODE_COUNT];         /* the point of the most mix objective (the first in
                                           the axes' order among equals) */
    size_t candidates, evaluated, pruned, invalid_plans; /* summed over the members' searches */
    size_t outside;                     /* likewise (pm_search_result.outside) */
} pm_search_mix_result;

/**
 * Searches a mix: at each point of the mix's hardware axes, each member's search (pm_search_run
 * with the point set on its scenario's chip) gives its best candidate per mode; the mix's
 * objective there is what one chip design yields for the fleet that serves the members' token
 * shares, each member on its own best deployment: the resources per token add, so the mix's
 * objective is the shares' weighted harmonic mean of the members' objectives, 1 / sum_i
 * (share_i / objective_i) (tokens/s per device, per mm2 or per dollar, or tokens per joule: each
 * is tokens per unit of a resource the members' deployments use apart). The fleet is taken as
 * large as the shares need (fractions of a deployment are not rounded). A member whose spec has
 * disagg competes its disaggregated deployments too (pm_search_run's), so its best may be a
 * prefill and a decode pool (the candidate's pools > 0; pm_search_layout names it) while another
 * member's is co-located. A point where a member meets none of its limits serves no mix. Returns
 * PM_OK, PM_ERR_INVALID_ARG (no members or too many, a share not > 0, a member with hardware axes,
 * a shard or another objective),
 * PM_ERR_UNSUPPORTED (members on different accelerators: a mix is one chip's) or a member's
 * search's error, its message naming the member.
 */
PM_API pm_status pm_search_mix_run(const pm_search_mix *mix, pm_search_mix_result *out,
                                   pm_error *err);
/** Frees what r holds (not r itself); r may be NULL. */
PM_API void pm_search_mix_result_free(pm_search_mix_result *r);
/** pm_search_warning of a mix's answer: its hardware axes and each mode's best point (the
 * members' chip, the first member's scenario's). */
PM_API bool pm_search_mix_warning(const pm_search_mix *mix, const pm_search_mix_result *r,
                                  size_t i, char *note, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* PRESERVE_MODEL_H */
