/*
 * config.c - reading the four inputs (model, accelerator, cluster, workload) from resolved JSON
 * objects into the public structs, and the consistency checks that need several of them at once
 * (heads vs devices, datatypes vs the accelerator). Every number goes through the strict object
 * reader in json.c, so every error names the file, the JSON path, the expectation and the value.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const pm_range POSITIVE = {0.0, INFINITY, true, false};
static const pm_range NONNEGATIVE = {0.0, INFINITY, false, false};

/*
 * The magnitudes the model is defined for, per dimension, in SI. They lie far outside any real
 * part (a kilobyte per second to an exabyte per second, a megaflop to a zettaflop per second),
 * and they exist so that every number the model derives stays a finite, positive double: times
 * are bytes / bandwidth and flop / peak summed over up to 2^62 layer-steps, so a denormal
 * bandwidth (5e-324 GBps) makes a time infinite, an infinite launch cost makes a speedup NaN, and
 * a bandwidth of 1e300 makes a time underflow to zero. Zero stays allowed where a key's own range
 * allows it (a launch cost of 0); every other value must lie in [lo, hi].
 */
typedef struct magnitude {
    pm_dimension dim;
    double lo, hi;
} magnitude;

static const magnitude magnitudes[] = {
    {PM_DIM_BYTES, 1.0, 1e18},                /* 1 B .. 1 EB */
    {PM_DIM_BANDWIDTH, 1e3, 1e18},            /* 1 kB/s .. 1 EB/s */
    {PM_DIM_TIME, 1e-12, 1e3},                /* 1 ps .. 1000 s */
    {PM_DIM_COMPUTE, 1e6, 1e21},              /* 1 Mflop/s .. 1 Zflop/s */
    {PM_DIM_AREA, 1e-6, 1e6},                 /* mm2 */
    {PM_DIM_AREA_PER_COMPUTE, 1e-30, 1e-6},   /* mm2 per flop/s: 1e-18 .. 1e6 mm2 per TOPS */
    {PM_DIM_AREA_PER_BYTE, 1e-30, 1.0},       /* mm2 per byte */
    {PM_DIM_AREA_PER_ITEM, 1e-6, 1e6},        /* mm2 per stack or link */
    {PM_DIM_LENGTH, 1e-3, 1e6},               /* process node, nm */
    {PM_DIM_ENERGY, 1e-18, 1e-6},             /* 1 aJ .. 1 uJ per operation */
    {PM_DIM_ENERGY_PER_BYTE, 1e-18, 1e-6},    /* 1 aJ .. 1 uJ per byte */
    {PM_DIM_POWER, 1e-3, 1e6},                /* 1 mW .. 1 MW */
    {PM_DIM_POWER_PER_AREA, 1e-9, 1e3},       /* W per mm2 */
    {PM_DIM_MONEY, 1e-3, 1e9},                /* usd */
    {PM_DIM_MONEY_PER_BYTE, 1e-18, 1e-3},     /* 1e-9 .. 1e6 usd per GB */
    {PM_DIM_PER_AREA, 1e-12, 1.0},            /* defects per mm2 */
    {PM_DIM_LENGTH_MM, 1.0, 1e4},             /* wafer diameter, mm */
};

static const magnitude *magnitude_of(pm_dimension dim)
{
    for (size_t i = 0; i < PM_ARRAY_LEN(magnitudes); i++)
        if (magnitudes[i].dim == dim)
            return &magnitudes[i];
    return NULL; /* fractions and counts have their own ranges */
}

/* Whether x is 0 or within the model's magnitudes for dim. NaN fails. */
static bool magnitude_ok(double x, pm_dimension dim)
{
    const magnitude *m = magnitude_of(dim);
    if (!m)
        return isfinite(x);
    return (x >= m->lo && x <= m->hi) || fabs(x) <= 0.0;
}

/* The number written under key c: plain, or the "value" of a sourced number. */
static double written_value(const cJSON *c)
{
    if (cJSON_IsObject(c))
        c = cJSON_GetObjectItemCaseSensitive(c, "value");
    return cJSON_IsNumber(c) ? c->valuedouble : NAN;
}

/* pm_obj_quantity, then the magnitude check, failing at the key the value was written under
 * and in its unit, so that "5e-324 GBps" is answered in GBps. The written value is checked too:
 * 5e-324 us is 0 s once converted, but nobody writes a zero that way. */
static pm_status quantity(pm_obj *o, const char *base, pm_dimension dim, bool required,
                          pm_range r, double *out)
{
    double v = -INFINITY; /* every range used here excludes it: still there means "absent" */
    pm_status st = pm_obj_quantity(o, base, dim, required, r, &v);
    if (st != PM_OK || (isinf(v) && v < 0))
        return st;
    const magnitude *m = magnitude_of(dim);
    for (const cJSON *c = o->json->child; m && c; c = c->next) {
        char b[128];
        const char *unit = NULL;
        double f = 1.0;
        if (!pm_unit_split_key(c->string, b, sizeof b, &unit) || strcmp(b, base) != 0 ||
            !pm_unit_lookup(unit, &f, NULL))
            continue;
        double written = written_value(c);
        if (magnitude_ok(v, dim) && (fabs(v) > 0.0 || !(fabs(written) > 0.0)))
            break;
        return pm_obj_fail(o, c->string, PM_ERR_RANGE,
                           "must be %sin [%g, %g] %s, the range the model is defined for "
                           "(got %g)",
                           r.lo_open ? "" : "0 or ", m->lo / f, m->hi / f, unit, written);
    }
    *out = v;
    return PM_OK;
}

/* ---------------------------------------------------------------- model */

static pm_status int_field(pm_obj *o, const char *key, bool required, long lo, long hi, int *out)
{
    long v = *out;
    pm_status st = pm_obj_int(o, key, required, lo, hi, &v);
    if (st == PM_OK)
        *out = (int)v;
    return st;
}

/* HuggingFace spells some fields differently per family: try the aliases in order. */
static pm_status int_alias(pm_obj *o, const char *const *keys, size_t n, bool required, int *out)
{
    for (size_t i = 0; i < n; i++)
        pm_obj_declare(o, keys[i], PM_DIM_NONE);
    for (size_t i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, keys[i]);
        if (it && !cJSON_IsNull(it))
            return int_field(o, keys[i], true, 1, PM_MAX_MODEL_DIM, out);
    }
    if (required)
        return int_field(o, keys[0], true, 1, PM_MAX_MODEL_DIM, out);
    return PM_OK;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n && s; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

static const char *json_string(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* Whether a HuggingFace key is given with a value that turns its feature on: not null, false,
 * 0 or an empty list (configs of dense models write "num_experts": null, say). */
static bool hf_feature_on(const cJSON *it)
{
    if (!it || cJSON_IsNull(it) || cJSON_IsFalse(it))
        return false;
    if (cJSON_IsNumber(it))
        return !(fabs(it->valuedouble) <= 0.0);
    if (cJSON_IsArray(it) || cJSON_IsObject(it))
        return it->child != NULL;
    return true;
}

/*
 * HuggingFace keys that change cost in a way the model does not implement: a config that turns
 * one on is refused with an error naming it, never modelled as a dense Llama (a silently wrong
 * number is the worst outcome of this tool).
 */
typedef struct hf_key_note {
    const char *key, *why;
} hf_key_note;

static const hf_key_note hf_refused[] = {
    {"cross_attention_layers", "cross-attention layers are not modelled"},
    {"is_encoder_decoder", "encoder-decoder models are not modelled"},
    {"layers_block_type", "hybrid state-space layers are not modelled"},
    {"attn_layer_indices", "hybrid state-space layers are not modelled"},
    {"ssm_cfg", "hybrid state-space layers are not modelled"},
    {"moe_num_experts", "this family's MoE layout (moe_num_experts) is not modelled: give "
                        "num_experts and its keys"},
    {"num_experts_per_layer", "a per-layer expert count is not modelled"},
    {"moe_shared_expert_intermediate_size", "this family's shared-expert key is not modelled"},
};

/* HuggingFace keys known not to change the cost the model computes: accepted, and listed as
 * ignored by `resolve`. */
#define NOCOST "does not change the cost modelled"
static const hf_key_note hf_ignored[] = {
    {"rope_theta", "position encoding: " NOCOST},
    {"rope_scaling", "position encoding: " NOCOST},
    {"rope_type", "position encoding: " NOCOST},
    {"rope_local_base_freq", "position encoding: " NOCOST},
    {"partial_rotary_factor", "position encoding: " NOCOST},
    {"rotary_pct", "position encoding: " NOCOST},
    {"rotary_emb_base", "position encoding: " NOCOST},
    {"rotary_dim", "position encoding: " NOCOST},
    {"alibi", "position encoding: " NOCOST},
    {"rms_norm_eps", "numerics: " NOCOST},
    {"layer_norm_eps", "numerics: " NOCOST},
    {"layer_norm_epsilon", "numerics: " NOCOST},
    {"norm_eps", "numerics: " NOCOST},
    {"initializer_range", "training only"},
    {"init_std", "training only"},
    {"use_cache", "inference always caches K and V"},
    {"attention_dropout", "training only"},
    {"hidden_dropout", "training only"},
    {"hidden_dropout_prob", "training only"},
    {"attention_probs_dropout_prob", "training only"},
    {"embd_pdrop", "training only"},
    {"resid_pdrop", "training only"},
    {"attn_pdrop", "training only"},
    {"dropout", "training only"},
    {"classifier_dropout", "training only"},
    {"summary_activation", "classification head, not served"},
    {"summary_first_dropout", "classification head, not served"},
    {"summary_proj_to_labels", "classification head, not served"},
    {"summary_type", "classification head, not served"},
    {"summary_use_proj", "classification head, not served"},
    {"task_specific_params", "generation defaults"},
    {"bos_token_id", "token ids: " NOCOST},
    {"eos_token_id", "token ids: " NOCOST},
    {"pad_token_id", "token ids: " NOCOST},
    {"sep_token_id", "token ids: " NOCOST},
    {"decoder_start_token_id", "token ids: " NOCOST},
    {"image_token_index", "token ids: " NOCOST},
    {"boi_token_index", "token ids: " NOCOST},
    {"eoi_token_index", "token ids: " NOCOST},
    {"mm_tokens_per_image", "image tokens: the vision tower is not modelled"},
    {"torch_dtype", "the datatypes come from the workload"},
    {"dtype", "the datatypes come from the workload"},
    {"transformers_version", "metadata"},
    {"architectures", "metadata"},
    {"model_type", "metadata (the family sets defaults)"},
    {"_name_or_path", "metadata"},
    {"auto_map", "metadata"},
    {"tokenizer_class", "metadata"},
    {"use_bfloat16", "the datatypes come from the workload"},
    {"pretraining_tp", "training only (tensor-parallel slicing of the checkpoint)"},
    {"n_ctx", "the context the model was trained for (n_positions)"},
    {"vision_config", "the vision tower is not modelled (only the text model is)"},
    {"final_logit_softcapping", "a tanh on the logits: " NOCOST},
    {"attn_logit_softcapping", "a tanh on the scores: " NOCOST},
    {"query_pre_attn_scalar", "a scale of the scores: " NOCOST},
    {"logit_scale", "a scale of the logits: " NOCOST},
    {"cache_implementation", "how the engine lays out the KV cache"},
    {"scale_attn_weights", "a scale of the scores: " NOCOST},
    {"scale_attn_by_inverse_layer_idx", "a scale of the scores: " NOCOST},
    {"reorder_and_upcast_attn", "numerics: " NOCOST},
    {"apply_residual_connection_post_layernorm", "residual placement: " NOCOST},
    {"use_qk_norm", "a norm of Q and K: " NOCOST},
    {"router_aux_loss_coef", "training only"},
    {"output_router_logits", "training only"},
    {"router_jitter_noise", "training only"},
    {"router_z_loss_coef", "training only"},
    {"aux_loss_alpha", "training only"},
    {"seq_aux", "training only"},
    {"moe_aux_loss_coeff", "training only"},
    {"norm_topk_prob", "MoE routing weights' normalisation: " NOCOST},
    {"routed_scaling_factor", "a scale of the routed output: " NOCOST},
    {"scoring_func", "MoE router scores (softmax or sigmoid): " NOCOST},
    {"topk_method", "MoE expert selection: affects which experts, modelled as uniform routing "
                    "over all experts (the workload's routing_skew_alpha skews it)"},
    {"n_group", "group-limited routing: affects which experts (quality), modelled as uniform "
                "routing over all experts (each expert's marginal chance k/E is unchanged)"},
    {"topk_group", "group-limited routing: affects which experts (quality), modelled as uniform "
                   "routing over all experts (each expert's marginal chance k/E is unchanged)"},
    {"ep_size", "the checkpoint's expert-parallel layout: the cluster's expert_parallel "
                "decides"},
    {"original_max_position_embeddings", "position encoding (the context RoPE scaling "
                                         "extends): " NOCOST},
    {"initial_context_length", "position encoding (the context RoPE scaling extends): " NOCOST},
    {"sliding_window_size", "an alias of sliding_window (checked equal)"},
    {"experts_per_token", "an alias of num_experts_per_tok (checked equal)"},
    {"swiglu_limit", "a clamp inside the gated MLP: " NOCOST},
    {"clip_qkv", "a clamp of Q, K and V: " NOCOST},
    {"attention_multiplier", "a scale of the scores: " NOCOST},
    {"embedding_multiplier", "a scale of the embeddings: " NOCOST},
    {"residual_multiplier", "a scale of the residual branches: " NOCOST},
    {"logits_scaling", "a scale of the logits: " NOCOST},
    {"lm_head_bias", "a bias vector on the logits: its vocab_size adds are not modelled"},
    {"input_jitter_noise", "training only"},
    {"num_logits_to_keep", "the engine computes the logits of the last token only"},
    {"attn_implementation", "the attention kernel the engine picks"},
    {"_attn_implementation_autoset", "the attention kernel the engine picks"},
    {"qk_layernorm", "a norm of Q and K: " NOCOST},
    {"use_mrope", "position encoding (multimodal RoPE): " NOCOST},
    {"norm_type", "the kind of norm: " NOCOST},
    {"norm_epsilon", "numerics: " NOCOST},
    {"residual_dropout", "training only"},
    {"embedding_dropout", "training only"},
    {"attention_softmax_in_fp32", "numerics: " NOCOST},
    {"bias_dropout_fusion", "a training kernel fusion"},
    {"masked_softmax_fusion", "a training kernel fusion"},
    {"offset_alibi", "position encoding: " NOCOST},
    {"skip_bias_add", "a kernel fusion of the bias add"},
    {"skip_bias_add_qkv", "a kernel fusion of the bias add"},
    {"slow_but_exact", "numerics: " NOCOST},
    {"unk_token_id", "token ids: " NOCOST},
    {"word_embed_proj_dim", "OPT's embedding width (checked equal to hidden_size)"},
    {"do_layer_norm_before", "norm placement: " NOCOST},
    {"_remove_final_layer_norm", "norm placement: " NOCOST},
    {"layerdrop", "training only"},
    {"num_nextn_predict_layers", "the multi-token-prediction module serves only speculative "
                                 "decoding (not modelled): neither loaded nor run here"},
    /* DBRX's nested attn_config and ffn_config (hf_open_layout); clip_qkv is above. */
    /* Phi-3-small (phi3small): muP scales, the gegelu clamp, its own RoPE keys. */
    {"mup_attn_multiplier", "a scale of the scores: " NOCOST},
    {"mup_embedding_multiplier", "a scale of the embeddings: " NOCOST},
    {"mup_width_multiplier", "a scale of the logits: " NOCOST},
    {"mup_use_scaling", "a scale of the scores: " NOCOST},
    {"gegelu_limit", "a clamp inside the gated MLP: " NOCOST},
    {"rope_embedding_base", "position encoding: " NOCOST},
    {"rope_position_scale", "position encoding: " NOCOST},
    {"dummy_token_indices", "token ids masked in the logits: " NOCOST},
    {"attention_dropout_prob", "training only"},
    {"embedding_dropout_prob", "training only"},
    {"ffn_dropout_prob", "training only"},
    {"blocksparse_triton_kernel_block_size",
     "the block-sparse kernel's tile: what is read is set by blocksparse_block_size"},
    {"pad_sequence_to_multiple_of_64",
     "the HuggingFace implementation pads its inputs for its block-sparse kernel; serving "
     "engines (vLLM) do not"},
    {"ff_dim_multiplier", "Phi-3-small: sizes the MLP only without ff_intermediate_size, which "
                          "the reader then requires"},
    {"gegelu_pad_to_256", "Phi-3-small: pads the MLP width only without ff_intermediate_size, "
                          "which the reader then requires"},
    {"moe_jitter_eps", "training only"},
    {"moe_loss_weight", "training only"},
    {"emb_pdrop", "training only"},
    {"moe_normalize_expert_weights", "MoE routing weights' normalisation: " NOCOST},
    {"ffn_act_fn", "the experts' activation: DBRX's experts are GLUs (gate, up and down "
                   "matrices) whatever it is"},
    {"uniform_expert_assignment", "MoE expert selection: affects which experts, modelled as "
                                  "uniform routing over all experts"},
    /* PretrainedConfig's generic fields, which some exports write into nested configs. */
    {"tie_word_embeddings", "a nested config's copy: the model's own key decides"},
    {"return_dict", "output format, not served"},
    {"output_hidden_states", "output format, not served"},
    {"output_attentions", "output format, not served"},
    {"id2label", "classification head, not served"},
    {"label2id", "classification head, not served"},
    {"max_length", "generation defaults"},
    {"temperature", "generation defaults"},
    {"top_k", "generation defaults"},
    {"top_p", "generation defaults"},
};
#undef NOCOST

static const hf_key_note *find_note(const hf_key_note *list, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].key, key) == 0)
            return &list[i];
    return NULL;
}


/* Keys that must equal another when both are given: a family's second name for a key (then
 * ignored: hf_ignored), or a width the model takes as the other (OPT's embedding projection). */
static const struct {
    const char *key, *other, *why;
    pm_status status;
} hf_equal[] = {
    {"sliding_window_size", "sliding_window", "an alias", PM_ERR_INCONSISTENT},
    {"experts_per_token", "num_experts_per_tok", "an alias", PM_ERR_INCONSISTENT},
    {"word_embed_proj_dim", "hidden_size",
     "a projection of the embeddings to another width is not modelled", PM_ERR_UNSUPPORTED},
};

static pm_status hf_check_aliases(pm_obj *o)
{
    for (size_t i = 0; i < PM_ARRAY_LEN(hf_equal); i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o->json, hf_equal[i].key);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o->json, hf_equal[i].other);
        if (!a || !b || cJSON_IsNull(a) || cJSON_IsNull(b))
            continue;
        if (!cJSON_IsNumber(a))
            return pm_obj_fail(o, hf_equal[i].key, PM_ERR_TYPE, "expected a number (got %s)",
                               pm_json_type_name(a));
        if (cJSON_IsNumber(b) &&
            (a->valuedouble < b->valuedouble || a->valuedouble > b->valuedouble))
            return pm_obj_fail(o, hf_equal[i].key, hf_equal[i].status,
                               "must equal \"%s\" (%s; got %g against %g)", hf_equal[i].other,
                               hf_equal[i].why, a->valuedouble, b->valuedouble);
    }
    return PM_OK;
}

/* Refuses the unsupported keys of a HuggingFace object (the model, or its text_config). */
static pm_status hf_refuse(pm_obj *o)
{
    /* In the table's order, so that a MoE model is told it is MoE first. */
    for (size_t i = 0; i < PM_ARRAY_LEN(hf_refused); i++) {
        const hf_key_note *n = &hf_refused[i];
        if (hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, n->key)))
            return pm_obj_fail(o, n->key, PM_ERR_UNSUPPORTED, "%s (the config sets \"%s\")",
                               n->why, n->key);
    }
    return PM_OK;
}

/* After a HuggingFace object is read: a key that was not read is either known not to matter,
 * a likely misspelling of a key that does (an error with "did you mean"), or not recognised;
 * the first and the last are listed as ignored. note, when not NULL, is the reason recorded
 * for every key of the object (a multimodal wrapper's keys). */
static pm_status hf_finish(pm_obj *o, const char *note)
{
    for (const cJSON *c = o->json->child; c; c = c->next) {
        bool read = false;
        for (size_t i = 0; i < o->n_known && !read; i++)
            read = strcmp(o->known[i], c->string) == 0;
        if (read)
            continue;
        const hf_key_note *n = find_note(hf_ignored, PM_ARRAY_LEN(hf_ignored), c->string);
        const char *why = note ? note : n ? n->why : NULL;
        const char *near = why ? NULL : pm_obj_nearest_known(o, c->string);
        if (near)
            return pm_obj_fail(o, c->string, PM_ERR_UNKNOWN_KEY,
                               "unknown key \"%s\" (did you mean \"%s\"?)", c->string, near);
        char src[160];
        snprintf(src, sizeof src, "ignored: %s",
                 why ? why : "not recognised, assumed not to change cost");
        pm_status st = pm_obj_record(o, c->string,
                                     cJSON_IsNumber(c) ? c->valuedouble : NAN, "1", src,
                                     "ignored");
        if (st != PM_OK)
            return st;
    }
    return PM_OK;
}

/* Records a value the model uses that the file did not give. */
static pm_status note_value(pm_obj *o, const char *key, double v, const char *origin,
                            const char *why)
{
    return pm_obj_record(o, key, v, "1", why, origin);
}

/* An optional quantity: read into *out when the file gives it (under any unit), else *out is
 * left as it is (0: the fallback the struct documents) and the value that stands in for it,
 * dflt in unit_si, is recorded as defaulted under key (the documented spelling) with why. */
static pm_status optional_quantity(pm_obj *o, const char *base, pm_dimension dim, pm_range r,
                                   double *out, const char *key, double dflt,
                                   const char *unit_si, const char *why)
{
    double v = -INFINITY; /* quantity leaves it when the key is absent */
    pm_status st = quantity(o, base, dim, false, r, &v);
    if (st != PM_OK)
        return st;
    if (!(isinf(v) && v < 0)) {
        *out = v;
        return PM_OK;
    }
    return pm_obj_record(o, key, dflt, unit_si, why, "defaulted");
}

/* The first of keys present (not null) in o, or NULL. */
static const char *first_present(const pm_obj *o, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(o->json, keys[i]);
        if (it && !cJSON_IsNull(it))
            return keys[i];
    }
    return NULL;
}

/* The model families whose MLP is gated (SwiGLU, GeGLU) and those whose MLP is two plain
 * matrices, when the config does not say (HuggingFace files never do). */
static const char *const gated_families[] = {
    "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "gemma3_text",
    "phi3", "cohere", "cohere2", "olmo", "olmo2", "internlm2", "granite", "stablelm",
    "llama4_text", "exaone", "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
    "dbrx", "phi3small"};
static const char *const plain_families[] = {"gpt2", "gpt_neox", "opt", "falcon", "phi", "bloom",
                                             "gptj", "gpt_bigcode", "starcoder2"};
static const char *const gated_acts[] = {"silu", "swish", "swiglu", "gegelu", "geglu"};
/* The MoE families whose MLP's gate their activation tells (SiLU: gated). */
static const char *const act_families[] = {"olmoe", "granitemoe", "phimoe", "glm4_moe", "gpt_oss",
                                           "deepseek"};
/* Multimodal wrappers whose text model this reader knows, when text_config has no model_type. */
static const char *const hf_wrappers[] = {"llama4", "gemma3", "llava", "mllama", "mistral3"};

/*
 * What a family's transformers configuration class builds when a config leaves a key out
 * (transformers main @008e574, its dataclass configurations; Phi-3-small's remote
 * Phi3SmallConfig passes no tie_word_embeddings, so PretrainedConfig's True; InternLM2's,
 * EXAONE 3's and DeepSeekMoE's remote code was not checked, so the key is required): whether
 * the LM head is the embedding (tie_word_embeddings), sliding_window when absent (0: None) and
 * the layers it applies to without layer_types or sliding_window_pattern (0: every layer;
 * P: layer l global when (l + 1) % P == 0), whether a use_sliding_window key gates it (Qwen:
 * off by default), the vocabulary a wrapped text model may leave out (Gemma3TextConfig), and
 * a wrapper's text family (a text_config without model_type).
 */
typedef struct hf_family {
    const char *name;
    signed char tied;    /* 1 tied, 0 untied, -1 required */
    int window;          /* sliding_window's default */
    int window_period;   /* its layers: 0 every one, P every P-th global */
    bool use_window_key; /* use_sliding_window (default false) gates the window */
    int vocab;           /* vocab_size's default (0: required) */
    const char *text;    /* a wrapper's text family */
} hf_family;

static const hf_family hf_families[] = {
    {"llama", 0, 0, 0, false, 0, NULL},        {"mistral", 0, 4096, 0, false, 0, NULL},
    {"qwen2", 0, 4096, 0, true, 0, NULL},      {"qwen3", 0, 4096, 0, true, 0, NULL},
    {"gemma", 1, 0, 0, false, 0, NULL},        {"gemma2", 1, 4096, 2, false, 0, NULL},
    {"gemma3_text", 1, 4096, 6, false, 262208, NULL},
    {"phi3", 0, 0, 0, false, 0, NULL},         {"cohere", 1, 0, 0, false, 0, NULL},
    {"cohere2", 1, 4096, 4, false, 0, NULL},   {"olmo", 0, 0, 0, false, 0, NULL},
    {"olmo2", 0, 0, 0, false, 0, NULL},        {"internlm2", -1, 0, 0, false, 0, NULL},
    {"granite", 0, 0, 0, false, 0, NULL},      {"stablelm", 0, 0, 0, false, 0, NULL},
    {"exaone", -1, 0, 0, false, 0, NULL},      {"gpt2", 1, 0, 0, false, 0, NULL},
    {"gpt_neox", 0, 0, 0, false, 0, NULL},     {"opt", 1, 0, 0, false, 0, NULL},
    {"falcon", 1, 0, 0, false, 0, NULL},       {"phi", 0, 0, 0, false, 0, NULL},
    {"bloom", 1, 0, 0, false, 0, NULL},        {"gptj", 0, 0, 0, false, 0, NULL},
    {"gpt_bigcode", 1, 0, 0, false, 0, NULL},  {"starcoder2", 1, 0, 0, false, 0, NULL},
    {"phi3small", 1, 0, 0, false, 0, NULL},   {"mixtral", 0, 0, 0, false, 0, NULL},
    {"qwen2_moe", 0, 4096, 0, true, 0, NULL},  {"qwen3_moe", 0, 4096, 0, true, 0, NULL},
    {"deepseek_v2", 0, 0, 0, false, 0, NULL},  {"deepseek_v3", 0, 0, 0, false, 0, NULL},
    {"deepseek", -1, 0, 0, false, 0, NULL},    {"llama4_text", 0, 0, 0, false, 0, NULL},
    {"olmoe", 0, 0, 0, false, 0, NULL},        {"granitemoe", 0, 0, 0, false, 0, NULL},
    {"phimoe", 0, 0, 0, false, 0, NULL},       {"glm4_moe", 0, 0, 0, false, 0, NULL},
    {"gpt_oss", 0, 128, 2, false, 0, NULL},    {"dbrx", 0, 0, 0, false, 0, NULL},
    {"llama4", 0, 0, 0, false, 0, "llama4_text"},
    {"gemma3", 1, 4096, 6, false, 262208, "gemma3_text"},
    {"llava", 0, 0, 0, false, 0, "llama"},     {"mistral3", 0, 4096, 0, false, 0, "mistral"},
    {"mllama", -1, 0, 0, false, 0, NULL},
};

/* The family's defaults (a wrapper's: its text family's), or NULL (a native file). */
static const hf_family *hf_family_of(const char *mt)
{
    for (size_t i = 0; mt && i < PM_ARRAY_LEN(hf_families); i++)
        if (strcmp(mt, hf_families[i].name) == 0)
            return hf_families[i].text ? hf_family_of(hf_families[i].text) : &hf_families[i];
    return NULL;
}

/*
 * Features that only some families build, with the keys that set them: a family's
 * transformers configuration class reads its own keys and ignores any other (LlamaConfig keeps
 * "num_local_experts" or "sliding_window" as an attribute nothing reads), so a config that sets
 * another family's feature key describes a model its family does not build. It is refused by
 * the key, never modelled as the feature (the checkpoint has none) nor silently as the family
 * (the user meant the feature). A key that is off (null, 0, false, empty) passes.
 */
typedef struct hf_feature {
    const char *what;
    const char *const *keys, *const *families;
    size_t n_keys, n_families;
} hf_feature;

static const char *const moe_keys[] = {"num_experts", "num_local_experts", "n_routed_experts",
                                       "num_experts_per_tok", "moe_intermediate_size",
                                       "n_shared_experts", "shared_expert_intermediate_size",
                                       "first_k_dense_replace", "decoder_sparse_step",
                                       "interleave_moe_layer_step", "moe_layers"};
static const char *const moe_families[] = {"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2",
                                           "deepseek_v3", "dbrx", "olmoe", "granitemoe",
                                           "phimoe", "glm4_moe", "gpt_oss", "deepseek",
                                           "llama4", "llama4_text"};
static const char *const mla_keys[] = {"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim",
                                       "qk_rope_head_dim", "v_head_dim"};
static const char *const mla_families[] = {"deepseek_v2", "deepseek_v3"};
static const char *const chunk_keys[] = {"attention_chunk_size", "no_rope_layers"};
static const char *const chunk_families[] = {"llama4", "llama4_text"};
/* dense_attention_every_n_layers alone may only say 1 (every layer dense: read_window). */
static const char *const sparse_keys[] = {"blocksparse_block_size"};
static const char *const sparse_families[] = {"phi3small"};
static const char *const window_keys[] = {"sliding_window", "sliding_window_pattern",
                                          "_sliding_window_pattern", "sliding_window_size"};
static const char *const window_families[] = {"mistral", "mixtral", "qwen2", "qwen2_moe",
                                              "qwen3", "qwen3_moe", "gemma2", "gemma3",
                                              "gemma3_text", "phi3", "phimoe", "starcoder2",
                                              "cohere2", "gpt_oss"};
#define HF_FEATURE(what, k, f) {what, k, f, PM_ARRAY_LEN(k), PM_ARRAY_LEN(f)}
static const hf_feature hf_features[] = {
    HF_FEATURE("mixture-of-experts layers", moe_keys, moe_families),
    HF_FEATURE("multi-head latent attention", mla_keys, mla_families),
    HF_FEATURE("chunked local attention", chunk_keys, chunk_families),
    HF_FEATURE("sliding-window attention", window_keys, window_families),
    HF_FEATURE("block-sparse attention", sparse_keys, sparse_families),
};

/* Refuses a feature key of another family, and a layer type no family here builds. */
static pm_status hf_check_features(pm_obj *o, const char *family)
{
    for (size_t f = 0; f < PM_ARRAY_LEN(hf_features); f++) {
        const hf_feature *ft = &hf_features[f];
        if (in_list(family, ft->families, ft->n_families))
            continue;
        for (size_t k = 0; k < ft->n_keys; k++)
            if (hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, ft->keys[k])))
                return pm_obj_fail(o, ft->keys[k], PM_ERR_UNSUPPORTED,
                                   "model_type \"%s\" has no %s (its transformers configuration "
                                   "does not read \"%s\", so the checkpoint is built without "
                                   "it): remove the key, or give the family that builds it",
                                   family, ft->what, ft->keys[k]);
    }
    /* layer_types: full attention, or a window where the family has one (read_window). */
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o->json, "layer_types");
    const bool windows = in_list(family, window_families, PM_ARRAY_LEN(window_families)) ||
                         in_list(family, chunk_families, PM_ARRAY_LEN(chunk_families));
    int l = 0;
    for (const cJSON *c = cJSON_IsArray(lt) ? lt->child : NULL; c; c = c->next, l++) {
        if (!cJSON_IsString(c) || strcmp(c->valuestring, "full_attention") == 0 ||
            (windows && (strcmp(c->valuestring, "sliding_attention") == 0 ||
                         strcmp(c->valuestring, "chunked_attention") == 0)))
            continue; /* a non-string is read_window's to refuse */
        return pm_obj_fail(o, "layer_types", PM_ERR_UNSUPPORTED,
                           "layer %d is \"%s\": %s", l, c->valuestring,
                           windows ? "only attention layers (full, sliding or chunked) are "
                                     "modelled"
                                   : "this family's layers are all full attention");
    }
    return PM_OK;
}

/*
 * The HuggingFace families (model_type) whose layers this model represents are those of the
 * lists above (gated, plain, act_families): decoder-only transformers made of attention and MLP
 * (dense or MoE) blocks, each family's defaults and keys checked against its transformers
 * configuration class. A config of any other family is refused by name: a hybrid (Mamba, linear
 * attention, RWKV), an encoder or a family whose keys were never checked would otherwise be read
 * as a Llama with some keys "not recognised" (Jamba as an all-attention Mixtral, Qwen3-Next as
 * full attention in every layer). The family checked is the text model's: a multimodal
 * wrapper's text_config model_type when it has one, else the wrapper's own.
 */
static pm_status hf_check_family(pm_obj *o, pm_obj *text, bool wrapped)
{
    const char *tmt = wrapped ? json_string(text->json, "model_type") : NULL;
    const char *mt = json_string(o->json, "model_type");
    pm_obj *at = tmt ? text : o;
    const char *family = tmt ? tmt : mt;
    if (!family)
        return pm_obj_fail(o, "model_type", PM_ERR_MISSING,
                           "missing required key \"model_type\" in a HuggingFace config (the "
                           "family decides what the config leaves out: gated MLP, biases, "
                           "parallel blocks); or write the model in the native format "
                           "(docs/data-format.md)");
    const bool wrapper = in_list(family, hf_wrappers, PM_ARRAY_LEN(hf_wrappers));
    if (wrapper ? !tmt && wrapped
                : in_list(family, gated_families, PM_ARRAY_LEN(gated_families)) ||
                      in_list(family, plain_families, PM_ARRAY_LEN(plain_families)) ||
                      in_list(family, act_families, PM_ARRAY_LEN(act_families)))
        return hf_check_features(at, family);
    return pm_obj_fail(at, "model_type", PM_ERR_UNSUPPORTED,
                       "the family \"%s\" is not one this model represents: its layers may "
                       "not all be attention and MLP blocks (hybrid, linear-attention and "
                       "state-space layers are not modelled); docs/data-format.md lists the "
                       "supported families, and a decoder of attention and MLP blocks can be "
                       "written in the native format",
                       family);
}

/* Families whose attention and MLP run in parallel from one input (one allreduce per layer)
 * without a key that says so; Falcon and GPT-NeoX have keys. */
static const char *const parallel_families[] = {"gptj", "cohere", "cohere2", "phi"};
/* Families with biases on every projection (unless a key says otherwise). */
static const char *const biased_families[] = {"gpt2", "gpt_neox", "opt", "bloom", "phi",
                                              "gpt_bigcode", "starcoder2", "phi3small"};

/* Sets m's local-layer pattern from a list with one item per layer: layer_types
 * ("sliding_attention" or "chunked_attention" local, "full_attention" global) or Llama-4's
 * no_rope_layers (1: a chunked layer with RoPE, 0: a global one without). The list must repeat
 * with a period of at most 64 layers. */
static pm_status pattern_from_list(pm_obj *o, const char *key, const cJSON *list, pm_model *m)
{
    if (!cJSON_IsArray(list))
        return pm_obj_fail(o, key, PM_ERR_TYPE, "expected a list (got %s)",
                           pm_json_type_name(list));
    const int n = cJSON_GetArraySize(list);
    if (n != m->layers)
        return pm_obj_fail(o, key, PM_ERR_INCONSISTENT,
                           "must list one type per layer (got %d types, %d layers)", n,
                           m->layers);
    const bool types = strcmp(key, "layer_types") == 0;
    const char *want = m->chunked_attention ? "chunked_attention" : "sliding_attention";
    bool *local = pm_calloc((size_t)n, sizeof *local);
    if (!local)
        return pm_obj_fail(o, key, PM_ERR_NOMEM, "out of memory");
    pm_status st = PM_OK;
    int l = 0;
    for (const cJSON *c = list->child; c && st == PM_OK; c = c->next, l++) {
        if (types && cJSON_IsString(c) && strcmp(c->valuestring, want) == 0)
            local[l] = true;
        else if (types && cJSON_IsString(c) && strcmp(c->valuestring, "full_attention") == 0)
            local[l] = false;
        else if (!types && cJSON_IsNumber(c) && (c->valueint == 0 || c->valueint == 1) &&
                 fabs(c->valuedouble - c->valueint) <= 0.0)
            local[l] = c->valueint == 1;
        else if (types && cJSON_IsString(c))
            st = pm_obj_fail(o, key, PM_ERR_UNSUPPORTED,
                             "layer type \"%s\" (layer %d) is not modelled here (expected \"%s\" "
                             "or \"full_attention\")",
                             c->valuestring, l, want);
        else
            st = pm_obj_fail(o, key, PM_ERR_TYPE, "item %d: expected %s (got %s)", l,
                             types ? "a layer type" : "0 or 1", pm_json_type_name(c));
    }
    int period = 0;
    for (int p = 1; st == PM_OK && p <= 64 && p <= n && period == 0; p++) {
        bool ok = true;
        for (int i = p; i < n && ok; i++)
            ok = local[i] == local[i % p];
        if (ok)
            period = p;
    }
    if (st == PM_OK && period == 0)
        st = pm_obj_fail(o, key, PM_ERR_UNSUPPORTED,
                         "the layer types do not repeat with a period of at most 64 layers: "
                         "such a pattern is not modelled");
    if (st == PM_OK) {
        m->window_period = period;
        m->local_mask = 0;
        for (int i = 0; i < period; i++)
            if (local[i])
                m->local_mask |= (uint64_t)1 << i;
    }
    pm_free(local);
    return st;
}

/* Every p-th layer global, the others local: layer l is global when (l + 1) % p == 0 (Gemma-3's
 * sliding_window_pattern, Llama-4's no_rope_layer_interval, Phi-3-small's
 * dense_attention_every_n_layers). Returns whether any layer is local (p > 1). */
static bool every_pth_global(pm_model *m, int p)
{
    m->window_period = p;
    m->local_mask = p > 1 ? ((uint64_t)1 << (p - 1)) - 1 : 0;
    return p > 1;
}

/* Records the layer classes the model uses (how: where the pattern came from). */
static pm_status note_windows(pm_obj *o, const pm_model *m, const char *how)
{
    pm_status st;
    const int local = pm_model_local_layers(m);
    if ((st = note_value(o, "local_layers", local, "derived", how)) != PM_OK ||
        (st = note_value(o, "global_layers", m->layers - local, "derived", how)) != PM_OK ||
        (st = note_value(o, "window_period", m->window_period, "derived", how)) != PM_OK)
        return st;
    return PM_OK;
}

/* Llama-4's chunked local attention: attention_chunk_size C, on the layers no_rope_layers (or
 * layer_types) marks, else every no_rope_layer_interval-th layer global (Llama4TextConfig's
 * rule, interval 4 by default for llama4_text), else every layer chunked. */
static pm_status read_chunks(pm_obj *o, pm_model *m, bool hf, const char *mt, const char **how)
{
    pm_status st;
    pm_obj_declare(o, "no_rope_layers", PM_DIM_NONE);
    pm_obj_declare(o, "no_rope_layer_interval", PM_DIM_NONE);
    if ((st = int_field(o, "attention_chunk_size", true, 1, PM_MAX_MODEL_DIM, &m->sliding_window)) !=
        PM_OK)
        return st;
    m->chunked_attention = true;
    m->window_period = 1;
    m->local_mask = 1;
    *how = "every layer chunked";
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o->json, "layer_types");
    const cJSON *nr = cJSON_GetObjectItemCaseSensitive(o->json, "no_rope_layers");
    if (lt && !cJSON_IsNull(lt)) {
        *how = "layer_types";
        return pattern_from_list(o, "layer_types", lt, m);
    }
    if (nr && !cJSON_IsNull(nr) && hf_feature_on(nr)) {
        *how = "no_rope_layers: 1 chunked, 0 global";
        return pattern_from_list(o, "no_rope_layers", nr, m);
    }
    int interval = hf && mt && strcmp(mt, "llama4_text") == 0 ? 4 : 0;
    if ((st = int_field(o, "no_rope_layer_interval", false, 1, 64, &interval)) != PM_OK)
        return st;
    if (interval > 0) {
        *how = "no_rope_layer_interval: every interval-th layer global";
        if (!every_pth_global(m, interval))
            m->sliding_window = 0;
    }
    return PM_OK;
}

/* Phi-3-small's block-sparse attention: blocks of blocksparse_block_size positions, the query's
 * last blocksparse_num_local_blocks read whole and one block in every blocksparse_vert_stride
 * beyond, per head shifted unless blocksparse_homo_head_pattern; layer l is dense when (l + 1)
 * % dense_attention_every_n_layers == 0 (HF modeling_phi3_small.py, vLLM phi3_small.py), every
 * layer block-sparse when that key is 0. */
static pm_status read_blocksparse(pm_obj *o, pm_model *m)
{
    pm_status st;
    int every = 0;
    if ((st = int_field(o, "blocksparse_block_size", true, 1, PM_MAX_MODEL_DIM,
                        &m->sparse_block)) != PM_OK ||
        (st = int_field(o, "blocksparse_num_local_blocks", true, 1, PM_MAX_MODEL_DIM,
                        &m->sparse_local_blocks)) != PM_OK ||
        (st = int_field(o, "blocksparse_vert_stride", true, 1, PM_MAX_MODEL_DIM,
                        &m->sparse_vert_stride)) != PM_OK ||
        (st = pm_obj_bool(o, "blocksparse_homo_head_pattern", false, &m->sparse_homo_head)) !=
            PM_OK ||
        (st = int_field(o, "dense_attention_every_n_layers", true, 0, PM_MAX_MODEL_DIM, &every)) !=
            PM_OK)
        return st;
    if ((double)m->sparse_block * m->sparse_local_blocks > PM_MAX_MODEL_DIM)
        return pm_obj_fail(o, "blocksparse_num_local_blocks", PM_ERR_RANGE,
                           "the local blocks span more than %d positions (got %d blocks of %d)",
                           PM_MAX_MODEL_DIM, m->sparse_local_blocks, m->sparse_block);
    if (!pm_obj_has(o, "blocksparse_homo_head_pattern") &&
        (st = note_value(o, "blocksparse_homo_head_pattern", 0, "defaulted",
                         "false (Phi3SmallConfig's default): each head's vertical blocks are "
                         "shifted by its index")) != PM_OK)
        return st;
    if (every > 64)
        return pm_obj_fail(o, "dense_attention_every_n_layers", PM_ERR_UNSUPPORTED,
                           "a period of %d layers is not modelled (at most 64)", every);
    const char *how = "dense_attention_every_n_layers 0: every layer block-sparse";
    m->window_period = 1;
    m->local_mask = 1;
    if (every > 0) {
        how = every == 1 ? "dense_attention_every_n_layers 1: every layer dense"
                         : "dense_attention_every_n_layers: layer l dense when (l + 1) % n == 0";
        if (!every_pth_global(m, every))
            m->sparse_block = 0;
    }
    return note_windows(o, m, how);
}

/* Reads the attention window keys: sliding_window, switched off by use_sliding_window false
 * (Qwen2), with the layers it applies to from layer_types, sliding_window_pattern (Gemma-3:
 * every P-th layer global), the family (Gemma-2 alternates, Gemma-3 defaults to 6), or every
 * layer (Mistral, Phi-3). */
static pm_status read_window(pm_obj *o, pm_model *m, bool hf, const char *mt)
{
    pm_status st;
    static const char *const k_pattern[] = {"sliding_window_pattern", "_sliding_window_pattern"};
    pm_obj_declare(o, "sliding_window", PM_DIM_NONE);
    pm_obj_declare(o, "use_sliding_window", PM_DIM_NONE);
    pm_obj_declare(o, "max_window_layers", PM_DIM_NONE);
    pm_obj_declare(o, "layer_types", PM_DIM_NONE);
    for (size_t i = 0; i < PM_ARRAY_LEN(k_pattern); i++)
        pm_obj_declare(o, k_pattern[i], PM_DIM_NONE);
    pm_obj_declare(o, "attention_chunk_size", PM_DIM_NONE);
    /* Absent, sliding_window is the family's default (MistralConfig's 4096, Gemma-2's 4096,
     * gpt-oss's 128, ...); null is no window. The Qwen families' use_sliding_window, false by
     * default, switches it on. */
    const hf_family *fam = hf ? hf_family_of(mt) : NULL;
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(o->json, "sliding_window");
    const bool dflt = !sw && fam && fam->window > 0;
    const bool given = (sw && !cJSON_IsNull(sw)) || dflt;
    bool use = given && !(fam && fam->use_window_key);
    if ((st = pm_obj_bool(o, "use_sliding_window", false, &use)) != PM_OK)
        return st;
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(o->json, "blocksparse_block_size");
    if (bs && !cJSON_IsNull(bs)) {
        if ((given && use) || hf_feature_on(cJSON_GetObjectItemCaseSensitive(
                                  o->json, "attention_chunk_size")))
            return pm_obj_fail(o, "blocksparse_block_size", PM_ERR_UNSUPPORTED,
                               "block-sparse attention with a sliding window or chunks is not "
                               "modelled (vLLM refuses the pair too)");
        return read_blocksparse(o, m);
    }
    if (pm_obj_has(o, "dense_attention_every_n_layers")) {
        /* Alone it may only say what every model without the blocksparse_* keys is. */
        int every = 1;
        if ((st = int_field(o, "dense_attention_every_n_layers", false, 0, PM_MAX_MODEL_DIM,
                            &every)) != PM_OK)
            return st;
        if (every != 1)
            return pm_obj_fail(o, "dense_attention_every_n_layers", PM_ERR_MISSING,
                               "block-sparse layers (got %d) need blocksparse_block_size, "
                               "blocksparse_num_local_blocks and blocksparse_vert_stride; 1 "
                               "(every layer dense) needs none",
                               every);
    }
    if (hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, "attention_chunk_size"))) {
        if (given && use)
            return pm_obj_fail(o, "attention_chunk_size", PM_ERR_UNSUPPORTED,
                               "a sliding window and chunked attention in one model are not "
                               "modelled (the config sets both)");
        const char *how = NULL;
        if ((st = read_chunks(o, m, hf, mt, &how)) != PM_OK)
            return st;
        return note_windows(o, m, how);
    }
    if (!given || !use) {
        if (given && !dflt)
            return note_value(o, "sliding_window", NAN, "ignored",
                              "ignored: use_sliding_window is false");
        return note_value(o, "sliding_window", 0, "defaulted",
                          !given ? "no window: full attention in every layer"
                          : pm_obj_has(o, "use_sliding_window")
                              ? "no window: use_sliding_window is false"
                              : "no window: use_sliding_window is false by the family's "
                                "default");
    }
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o->json, "layer_types");
    if (fam && (strcmp(fam->name, "qwen2_moe") == 0 || strcmp(fam->name, "qwen3_moe") == 0) &&
        (!lt || cJSON_IsNull(lt)))
        return pm_obj_fail(o, "use_sliding_window", PM_ERR_UNSUPPORTED,
                           "model_type %s with a window is not modelled: which layers take it "
                           "differs between transformers versions (every other layer below "
                           "max_window_layers in one, every layer in another)",
                           fam->name);
    if (dflt) {
        m->sliding_window = fam->window;
        if ((st = note_value(o, "sliding_window", m->sliding_window, "defaulted",
                             "model_type: the family's default")) != PM_OK)
            return st;
    } else if ((st = int_field(o, "sliding_window", true, 1, PM_MAX_MODEL_DIM,
                               &m->sliding_window)) != PM_OK)
        return st;
    m->window_period = 1;
    m->local_mask = 1;
    const char *how = "every layer";
    const char *pk = first_present(o, k_pattern, 2);
    int pattern = 0;
    if (pk && (st = int_field(o, pk, true, 1, 64, &pattern)) != PM_OK)
        return st;
    const int fam_period = fam ? fam->window_period : 0;
    if (lt && !cJSON_IsNull(lt)) {
        if ((st = pattern_from_list(o, "layer_types", lt, m)) != PM_OK)
            return st;
        how = "layer_types";
    } else if (pk || fam_period > 1) {
        /* Layer l is global when (l + 1) % P == 0 (Gemma-3's rule, and the layer_types the
         * families derive: Gemma-2's and gpt-oss's alternation, layer 0 local, is P = 2;
         * Cohere2Config's default P is 4, Gemma3TextConfig's 6). */
        const int p = pk ? pattern : fam_period;
        how = pk                ? pk
              : fam_period == 2 ? "model_type: the family's default, even layers local, odd "
                                  "layers global"
                                : "model_type: the family's default, every window_period-th "
                                  "layer global";
        if (!every_pth_global(m, p)) {
            m->sliding_window = 0; /* every layer global */
            how = "the pattern makes every layer global";
        }
    } else if (fam && fam->use_window_key) {
        /* Qwen2, Qwen3: the layers from max_window_layers (28 by default) on are local. */
        long first = 28;
        const bool has_first = pm_obj_has(o, "max_window_layers");
        if ((st = pm_obj_int(o, "max_window_layers", false, 0, PM_MAX_MODEL_DIM, &first)) !=
            PM_OK)
            return st;
        if (first >= m->layers) {
            m->sliding_window = 0;
            how = has_first ? "max_window_layers: no layer is local"
                            : "max_window_layers (28, the family's default): no layer is local";
        } else if (first > 0) {
            return pm_obj_fail(o, "max_window_layers", PM_ERR_UNSUPPORTED,
                               "full attention in the first %ld layers and a window in the "
                               "other %ld is not modelled (only patterns that repeat)%s",
                               first, (long)m->layers - first,
                               has_first ? "" : "; 28 is the family's default");
        }
    }
    return note_windows(o, m, how);
}

/* Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank turns it on, and then the head
 * dimensions are required (their defaults differ between families); q_lora_rank null or absent
 * is a full-rank query projection. */
static pm_status read_mla(pm_obj *o, pm_model *m, const char *mt)
{
    static const char *const dims[] = {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
    pm_obj_declare(o, "kv_lora_rank", PM_DIM_NONE);
    pm_obj_declare(o, "q_lora_rank", PM_DIM_NONE);
    for (size_t i = 0; i < PM_ARRAY_LEN(dims); i++)
        pm_obj_declare(o, dims[i], PM_DIM_NONE);
    const cJSON *kl = cJSON_GetObjectItemCaseSensitive(o->json, "kv_lora_rank");
    if (!kl && mt && in_list(mt, mla_families, PM_ARRAY_LEN(mla_families)))
        return pm_obj_fail(o, "kv_lora_rank", PM_ERR_MISSING,
                           "model_type \"%s\" builds multi-head latent attention: kv_lora_rank "
                           "is required (transformers' default is not assumed)",
                           mt);
    if (!kl || cJSON_IsNull(kl))
        return PM_OK;
    pm_status st;
    int *out[] = {&m->qk_nope_head_dim, &m->qk_rope_head_dim, &m->v_head_dim};
    if ((st = int_field(o, "kv_lora_rank", true, 1, 1L << 20, &m->kv_lora_rank)) != PM_OK)
        return st;
    const cJSON *ql = cJSON_GetObjectItemCaseSensitive(o->json, "q_lora_rank");
    if (ql && !cJSON_IsNull(ql) &&
        (st = int_field(o, "q_lora_rank", true, 1, 1L << 20, &m->q_lora_rank)) != PM_OK)
        return st;
    if ((!ql || cJSON_IsNull(ql)) &&
        (st = note_value(o, "q_lora_rank", 0, "defaulted",
                         "a full-rank query projection")) != PM_OK)
        return st;
    for (size_t i = 0; i < PM_ARRAY_LEN(dims); i++) {
        /* qk_rope_head_dim may be 0 (no position part); the others carry the heads. */
        if ((st = int_field(o, dims[i], true, i == 1 ? 0 : 1, 1L << 20, out[i])) != PM_OK)
            return st;
    }
    return note_value(o, "kv_bytes_per_position_elements",
                      m->kv_lora_rank + m->qk_rope_head_dim, "derived",
                      "MLA: kv_lora_rank + qk_rope_head_dim per layer, replicated on every "
                      "tensor-parallel rank");
}

/* The layer pattern of a MoE model: DeepSeek's first_k_dense_replace and moe_layer_freq (layer
 * l is MoE when l >= first and l % freq == 0), or Qwen's decoder_sparse_step and Llama-4's
 * interleave_moe_layer_step (MoE when (l + 1) % step == 0); mlp_only_layers must be empty and
 * Llama-4's moe_layers, when given, must be the list its step gives. */
static pm_status read_moe_pattern(pm_obj *o, pm_model *m)
{
    static const char *const k_step[] = {"decoder_sparse_step", "interleave_moe_layer_step"};
    pm_status st;
    pm_obj_declare(o, "mlp_only_layers", PM_DIM_NONE);
    pm_obj_declare(o, "moe_layers", PM_DIM_NONE);
    int first = 0, freq = 0, step = 0;
    const char *step_key = first_present(o, k_step, 2);
    if ((st = int_field(o, "first_k_dense_replace", false, 0, PM_MAX_LAYERS, &first)) != PM_OK ||
        (st = int_field(o, "moe_layer_freq", false, 1, 64, &freq)) != PM_OK)
        return st;
    for (size_t i = 0; i < 2; i++)
        pm_obj_declare(o, k_step[i], PM_DIM_NONE);
    if (step_key && (st = int_field(o, step_key, true, 1, 64, &step)) != PM_OK)
        return st;
    if (freq > 0 && step > 0)
        return pm_obj_fail(o, step_key, PM_ERR_INCONSISTENT,
                           "moe_layer_freq and %s both set the MoE layers: give one", step_key);
    m->moe_first_layer = first;
    m->moe_period = freq > 0 ? freq : step > 0 ? step : 1;
    m->moe_phase = step > 0 ? step - 1 : 0;
    if (hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, "mlp_only_layers")))
        return pm_obj_fail(o, "mlp_only_layers", PM_ERR_UNSUPPORTED,
                           "dense layers listed one by one are not modelled (only "
                           "first_k_dense_replace and a period)");
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(o->json, "moe_layers");
    if (ml && !cJSON_IsNull(ml)) {
        bool same = cJSON_IsArray(ml) && cJSON_GetArraySize(ml) == pm_model_moe_layers(m);
        int l = 0;
        for (const cJSON *c = same ? ml->child : NULL; c && same; c = c->next, l++) {
            while (l < m->layers && !pm_model_layer_is_moe(m, l))
                l++;
            same = cJSON_IsNumber(c) && fabs(c->valuedouble - l) <= 0.0;
        }
        if (!same)
            return pm_obj_fail(o, "moe_layers", PM_ERR_UNSUPPORTED,
                               "a list of MoE layers other than every %d-th is not modelled",
                               m->moe_period);
    }
    return note_value(o, "moe_layers_count", pm_model_moe_layers(m), "derived",
                      "layers with a MoE block (first_k_dense_replace and the period)");
}

/* Mixture of experts: the routed experts (num_experts, num_local_experts, n_routed_experts),
 * top-k, each expert's width (moe_intermediate_size, else intermediate_size: Mixtral,
 * Llama-4), the shared experts (DeepSeek's n_shared_experts of moe_intermediate_size, Qwen2's
 * shared_expert_intermediate_size, Llama-4's one of intermediate_size) and the layer pattern.
 * Llama-4's dense layers are intermediate_size_mlp wide. */
static pm_status read_moe(pm_obj *o, pm_model *m, const char *mt, bool dbrx)
{
    static const char *const k_experts[] = {"num_experts", "num_local_experts", "n_routed_experts"};
    static const char *const keys[] = {"moe_intermediate_size",
                                       "n_shared_experts", "shared_expert_intermediate_size",
                                       "intermediate_size_mlp", "first_k_dense_replace",
                                       "moe_layer_freq"};
    /* DBRX's ffn_config: moe_num_experts and moe_top_k, always MoE. */
    const char *const top_k = dbrx ? "moe_top_k" : "num_experts_per_tok";
    pm_status st;
    pm_obj_declare(o, top_k, PM_DIM_NONE);
    for (size_t i = 0; i < PM_ARRAY_LEN(keys); i++)
        pm_obj_declare(o, keys[i], PM_DIM_NONE);
    const char *ek = dbrx ? "moe_num_experts" : first_present(o, k_experts, 3);
    const cJSON *ev = ek ? cJSON_GetObjectItemCaseSensitive(o->json, ek) : NULL;
    for (size_t i = 0; i < 3 && !dbrx; i++)
        pm_obj_declare(o, k_experts[i], PM_DIM_NONE);
    /* A family that always builds experts: transformers would take its default count, a
     * guess this reader does not make (nor model the layers dense). */
    static const char *const always_moe[] = {"mixtral", "qwen2_moe", "qwen3_moe",
                                             "olmoe", "granitemoe", "phimoe",
                                             "glm4_moe", "gpt_oss", "llama4_text"};
    if (!dbrx && !ek && mt && in_list(mt, always_moe, PM_ARRAY_LEN(always_moe)))
        return pm_obj_fail(o, "num_experts", PM_ERR_MISSING,
                           "model_type \"%s\" builds mixture-of-experts layers: its expert count "
                           "(num_experts, num_local_experts or n_routed_experts) is required "
                           "(transformers' default for the family is not assumed)",
                           mt);
    /* DeepSeek-V2/V3 without the count: transformers' own classes build routed experts (their
     * defaults, 64 and 256) and DeepSeek's remote code dense layers; neither is assumed. */
    static const char *const count_ambiguous[] = {"deepseek_v2", "deepseek_v3"};
    const bool any_count = cJSON_GetObjectItemCaseSensitive(o->json, k_experts[0]) ||
                           cJSON_GetObjectItemCaseSensitive(o->json, k_experts[1]) ||
                           cJSON_GetObjectItemCaseSensitive(o->json, k_experts[2]);
    if (!dbrx && !any_count && mt && in_list(mt, count_ambiguous, PM_ARRAY_LEN(count_ambiguous)))
        return pm_obj_fail(o, "n_routed_experts", PM_ERR_MISSING,
                           "model_type \"%s\": the routed expert count is required: without it "
                           "transformers' class builds %s routed experts per layer and DeepSeek's "
                           "remote code dense layers (null: dense layers)",
                           mt, strcmp(mt, "deepseek_v2") == 0 ? "64" : "256");
    if (!dbrx && (!ek || !hf_feature_on(ev)))
        return PM_OK; /* dense: "num_experts": 0 or null */
    const int expert_width = m->intermediate;
    if ((st = int_field(o, ek, true, 1, PM_MAX_EXPERTS, &m->experts)) != PM_OK ||
        (st = int_field(o, top_k, true, 1, m->experts, &m->experts_per_token)) != PM_OK)
        return st;
    m->expert_intermediate = expert_width;
    const bool has_moe_width = pm_obj_has(o, "moe_intermediate_size");
    if ((st = int_field(o, "moe_intermediate_size", false, 1, PM_MAX_MODEL_DIM,
                        &m->expert_intermediate)) != PM_OK)
        return st;
    if (!has_moe_width &&
        (st = note_value(o, "moe_intermediate_size", m->expert_intermediate, "derived",
                         dbrx ? "ffn_hidden_size: each expert's width"
                              : "intermediate_size: each expert is as wide as the config's MLP")) !=
            PM_OK)
        return st;
    const bool llama4 = mt && strcmp(mt, "llama4_text") == 0;
    if ((st = int_field(o, "n_shared_experts", false, 0, 64, &m->shared_experts)) != PM_OK)
        return st;
    m->shared_intermediate = m->shared_experts > 0 ? m->expert_intermediate : 0;
    if (pm_obj_has(o, "shared_expert_intermediate_size") &&
        hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, "shared_expert_intermediate_size"))) {
        if ((st = int_field(o, "shared_expert_intermediate_size", true, 1, PM_MAX_MODEL_DIM,
                            &m->shared_intermediate)) != PM_OK)
            return st;
        if (m->shared_experts == 0)
            m->shared_experts = 1;
    }
    if (llama4 && m->shared_experts == 0) {
        /* Llama4TextMoe always has one shared expert of intermediate_size. */
        m->shared_experts = 1;
        m->shared_intermediate = expert_width;
        if ((st = note_value(o, "n_shared_experts", 1, "derived",
                             "model_type llama4_text: one shared expert of "
                             "intermediate_size")) != PM_OK)
            return st;
    }
    if ((st = int_field(o, "intermediate_size_mlp", false, 1, PM_MAX_MODEL_DIM,
                        &m->intermediate)) != PM_OK)
        return st;
    if (m->parallel_block)
        return pm_obj_fail(o, ek, PM_ERR_UNSUPPORTED,
                           "experts with parallel attention and MLP blocks are not modelled");
    return read_moe_pattern(o, m);
}

/* Where a HuggingFace config keeps its keys: all in the model object, or (DBRX) the KV heads
 * under attn_config and the MLP and its experts under ffn_config, some under DBRX's own names
 * (n_layers, n_heads, max_seq_len, kv_n_heads, ffn_hidden_size, moe_num_experts, moe_top_k),
 * read only for model_type dbrx: another family's n_layers may count otherwise. */
typedef struct hf_layout {
    pm_obj *attn, *ffn;
    bool dbrx;
    const char *family; /* the text model's model_type (a wrapper's text family), or NULL */
} hf_layout;

/* keys (the first n in a HuggingFace file, the first alone in a native one), or DBRX's key. */
static pm_status int_names(pm_obj *o, const hf_layout *l, const char *const *keys, size_t n,
                           const char *dbrx_key, bool required, int *out)
{
    if (l->dbrx)
        return int_alias(o, &dbrx_key, 1, required, out);
    return int_alias(o, keys, n, required, out);
}

/* The KV heads: the key of the family, multi_query (one KV head: Falcon, GPT-BigCode), or
 * multi-head attention. Falcon's num_kv_heads counts only with new_decoder_architecture.
 * *kv_key_out is the key that gave them (NULL: derived), *new_arch Falcon's flag. */
static pm_status read_kv_heads(pm_obj *o, const hf_layout *l, pm_model *m, bool hf,
                               const char *mt, bool *new_arch, const char **kv_key_out)
{
    pm_status st;
    static const char *const k_kv[] = {"num_key_value_heads", "num_kv_heads", "n_head_kv"};
    m->kv_heads = m->heads;
    bool mqa = false;
    *new_arch = false;
    if (hf) {
        if ((st = pm_obj_bool(o, "multi_query", false, &mqa)) != PM_OK ||
            (st = pm_obj_bool(o, "new_decoder_architecture", false, new_arch)) != PM_OK)
            return st;
    }
    /* DBRX's kv_n_heads is required: transformers' DbrxAttentionConfig defaults it to 1. */
    static const char *const dbrx_kv[] = {"kv_n_heads"};
    const char *kv_key = l->dbrx ? first_present(l->attn, dbrx_kv, 1)
                                 : first_present(o, k_kv, hf ? 3 : 1);
    if ((st = int_names(l->attn, l, k_kv, hf ? 3 : 1, "kv_n_heads", l->dbrx, &m->kv_heads)) !=
        PM_OK)
        return st;
    if (hf && mt && strcmp(mt, "falcon") == 0 && !*new_arch) {
        m->kv_heads = mqa ? 1 : m->heads;
        if (kv_key && (st = note_value(o, kv_key, NAN, "ignored",
                                       "ignored: Falcon reads it only with "
                                       "new_decoder_architecture")) != PM_OK)
            return st;
        kv_key = NULL;
    } else if (mqa && !kv_key) {
        m->kv_heads = 1;
    }
    if (!kv_key && (st = note_value(o, "num_key_value_heads", m->kv_heads,
                                    mqa ? "derived" : "defaulted",
                                    mqa ? "multi_query: one KV head"
                                        : "= num_attention_heads (multi-head attention)")) !=
                       PM_OK)
        return st;
    *kv_key_out = kv_key;
    return PM_OK;
}

/* The head dim: MLA's query/key head, the file's head_dim, or hidden / heads. */
static pm_status read_head_dim(pm_obj *o, pm_model *m, const char *mt)
{
    pm_status st;
    if ((st = read_mla(o, m, mt)) != PM_OK)
        return st;
    const bool mla = m->kv_lora_rank > 0;
    if (m->hidden % m->heads == 0)
        m->head_dim = m->hidden / m->heads;
    if (mla)
        m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
    /* A HuggingFace null is absent (transformers derives it then); a native file is strict. */
    pm_obj_declare(o, "head_dim", PM_DIM_NONE);
    const cJSON *hd = cJSON_GetObjectItemCaseSensitive(o->json, "head_dim");
    bool has_head_dim = hd && !(mt && cJSON_IsNull(hd));
    if (has_head_dim &&
        (st = int_field(o, "head_dim", true, 1, PM_MAX_MODEL_DIM, &m->head_dim)) != PM_OK)
        return st;
    if (!has_head_dim && mla &&
        (st = note_value(o, "head_dim", m->head_dim, "derived",
                         "MLA: qk_nope_head_dim + qk_rope_head_dim (the query/key head)")) !=
            PM_OK)
        return st;
    if (mla)
        has_head_dim = true;
    if (!has_head_dim && m->hidden % m->heads != 0)
        return pm_fail(o->err, PM_ERR_INCONSISTENT, o->file, "$.head_dim",
                       "hidden_size %d is not a multiple of num_attention_heads %d: give "
                       "\"head_dim\" explicitly",
                       m->hidden, m->heads);
    if (!has_head_dim &&
        (st = note_value(o, "head_dim", m->head_dim, "derived",
                         "hidden_size / num_attention_heads")) != PM_OK)
        return st;
    return PM_OK;
}

/* The MLP's width (4 x hidden by default), the vocabulary and the trained context. */
static pm_status read_mlp_shape(pm_obj *o, const hf_layout *l, pm_model *m, bool hf)
{
    pm_status st;
    static const char *const k_inter[] = {"intermediate_size", "ff_intermediate_size", "n_inner",
                                          "ffn_hidden_size", "ffn_dim"};
    static const char *const k_pos[] = {"max_position_embeddings", "n_positions"};
    /* The default 4 x hidden_size in 64 bits: hidden_size may be up to PM_MAX_MODEL_DIM. */
    const int64_t four_h = 4 * (int64_t)m->hidden;
    m->intermediate = four_h <= PM_MAX_MODEL_DIM ? (int)four_h : 0;
    /* DBRX's ffn_hidden_size is required: DbrxFFNConfig's default is not 4 x d_model. */
    const bool has_inter = first_present(l->ffn, k_inter, hf ? 5 : 1) != NULL || l->dbrx;
    const char *mt = hf ? json_string(o->json, "model_type") : NULL;
    if (!has_inter && mt && strcmp(mt, "phi3small") == 0)
        return pm_obj_fail(o, "ff_intermediate_size", PM_ERR_MISSING,
                           "model_type phi3small: the MLP width is required (Phi3SmallConfig "
                           "derives it from ff_dim_multiplier and gegelu_pad_to_256 otherwise, "
                           "which this reader does not)");
    if (!has_inter && four_h > PM_MAX_MODEL_DIM)
        return pm_obj_fail(o, "intermediate_size", PM_ERR_RANGE,
                           "the default 4 x hidden_size = %lld exceeds %d: give "
                           "\"intermediate_size\" explicitly",
                           (long long)four_h, PM_MAX_MODEL_DIM);
    if ((st = int_names(l->ffn, l, k_inter, hf ? 5 : 1, "ffn_hidden_size", !hf || l->dbrx,
                        &m->intermediate)) != PM_OK)
        return st;
    if (!has_inter && (st = note_value(o, "intermediate_size", m->intermediate, "defaulted",
                                       "4 x hidden_size")) != PM_OK)
        return st;
    /* Required, except where the family's class has a default a published config relies on
     * (Gemma-3's text_config leaves out its 262208). */
    const hf_family *fam = hf ? hf_family_of(l->family) : NULL;
    const bool vocab_dflt = fam && fam->vocab > 0 && !pm_obj_has(o, "vocab_size");
    if (vocab_dflt) {
        m->vocab = fam->vocab;
        if ((st = note_value(o, "vocab_size", m->vocab, "defaulted",
                             "model_type: the family's default")) != PM_OK)
            return st;
    } else if ((st = int_field(o, "vocab_size", true, 1, PM_MAX_MODEL_DIM, &m->vocab)) != PM_OK)
        return st;
    if ((st = int_names(o, l, k_pos, hf ? 2 : 1, "max_seq_len", false,
                        &m->max_position_embeddings)) != PM_OK)
        return st;
    /* Learned absolute positions: GPT-2's and StarCoder's wpe (n_positions rows, 1024 by their
     * classes' default), OPT's embed_positions (max_position_embeddings + 2: its offset, 2048
     * by default). The others rotate (RoPE) or bias (ALiBi) and hold no table. */
    const char *pfam = hf ? l->family : NULL;
    const bool gpt2 = pfam && (strcmp(pfam, "gpt2") == 0 || strcmp(pfam, "gpt_bigcode") == 0);
    const bool opt = pfam && strcmp(pfam, "opt") == 0;
    if (gpt2 || opt) {
        const int n = m->max_position_embeddings > 0 ? m->max_position_embeddings
                      : opt                         ? 2048
                                                    : 1024;
        m->learned_positions = opt ? n + 2 : n;
        if ((st = note_value(o, "learned_positions", m->learned_positions, "derived",
                             opt ? "model_type opt: a learned position embedding of "
                                   "max_position_embeddings + 2 rows"
                                 : "model_type: a learned position embedding of n_positions "
                                   "rows")) != PM_OK)
            return st;
    }
    return PM_OK;
}

/* Gated MLP: explicit in native files; told by the family or the activation in HuggingFace
 * files. And whether the embedding and the LM head are tied. */
static pm_status read_gate_and_tie(pm_obj *o, pm_model *m, bool hf, const char *mt)
{
    pm_status st;
    static const char *const k_act[] = {"hidden_act", "hidden_activation",
                                        "activation_function"};
    const char *act = NULL;
    for (size_t i = 0; hf && i < PM_ARRAY_LEN(k_act); i++) {
        const char *a = NULL;
        if ((st = pm_obj_string(o, k_act[i], false, &a)) != PM_OK)
            return st;
        if (!act)
            act = a;
    }
    m->gated_mlp = true;
    const char *gated_why = "the native format's default";
    if (hf) {
        if (in_list(mt, plain_families, PM_ARRAY_LEN(plain_families))) {
            m->gated_mlp = false;
            gated_why = "model_type: this family's MLP has two plain matrices";
        } else if (in_list(mt, gated_families, PM_ARRAY_LEN(gated_families))) {
            gated_why = "model_type: this family's MLP is gated";
        } else if (act) {
            m->gated_mlp = in_list(act, gated_acts, PM_ARRAY_LEN(gated_acts));
            gated_why = m->gated_mlp ? "the activation is SiLU: gated (SwiGLU)"
                                     : "the activation is not SiLU: two plain matrices";
        }
    }
    const bool has_gated = pm_obj_has(o, "mlp_gated");
    /* Absent: the family's default (its configuration class's), untied in a native file. */
    const hf_family *fam = hf ? hf_family_of(mt) : NULL;
    m->tied_embeddings = fam && fam->tied == 1;
    const bool has_tied = pm_obj_has(o, "tie_word_embeddings");
    if (!has_tied && fam && fam->tied < 0)
        return pm_obj_fail(o, "tie_word_embeddings", PM_ERR_MISSING,
                           "model_type %s: whether the LM head is the embedding is required "
                           "(its configuration is remote code, whose default was not checked)",
                           mt);
    if ((st = pm_obj_bool(o, "mlp_gated", false, &m->gated_mlp)) != PM_OK ||
        (st = pm_obj_bool(o, "tie_word_embeddings", false, &m->tied_embeddings)) != PM_OK)
        return st;
    if (!has_gated && (st = note_value(o, "mlp_gated", m->gated_mlp, hf ? "derived" : "defaulted",
                                       gated_why)) != PM_OK)
        return st;
    if (!has_tied && (st = note_value(o, "tie_word_embeddings", m->tied_embeddings, "defaulted",
                                      !hf                    ? "untied"
                                      : m->tied_embeddings ? "model_type: the family's default (tied)"
                                                             : "model_type: the family's default "
                                                               "(untied)")) != PM_OK)
        return st;
    return PM_OK;
}

/* Biases: HuggingFace keys, else the family. *all_key_out is the key that set every
 * projection's (Falcon's "bias", StarCoder2's "use_bias"), or NULL. */
static pm_status read_biases(pm_obj *o, pm_model *m, bool hf, const char *mt,
                             const char **all_key_out)
{
    pm_status st;
    bool fam_bias = hf && in_list(mt, biased_families, PM_ARRAY_LEN(biased_families));
    bool attn_bias = fam_bias,
         qkv_bias = fam_bias || (mt && (strcmp(mt, "qwen2") == 0 || strcmp(mt, "qwen2_moe") == 0));
    bool mlp_bias = fam_bias, all_bias = false;
    if (mt && strcmp(mt, "gptj") == 0)
        mlp_bias = true; /* GPT-J: fc_in and fc_out have biases, attention has none */
    /* gpt-oss: attention_bias true by default (GptOssConfig), and its experts' gate_up_proj and
     * down_proj always have biases (modeling_gpt_oss.py; the router's bias, one per expert,
     * and the attention sinks, one per head, are not counted). */
    const bool gpt_oss = mt && strcmp(mt, "gpt_oss") == 0;
    if (gpt_oss)
        attn_bias = qkv_bias = mlp_bias = true;
    /* One key for every projection: Falcon's "bias", StarCoder2's "use_bias" and OPT's
     * "enable_bias" (true by their families' defaults, false removes them all). */
    const char *all_key = hf && pm_obj_has(o, "bias")          ? "bias"
                          : hf && pm_obj_has(o, "use_bias")    ? "use_bias"
                          : hf && pm_obj_has(o, "enable_bias") ? "enable_bias"
                                                               : NULL;
    if (all_key && (st = pm_obj_bool(o, all_key, false, &all_bias)) != PM_OK)
        return st;
    if (all_bias || (all_key && strcmp(all_key, "bias") != 0))
        attn_bias = qkv_bias = mlp_bias = all_bias;
    /* InternLM2's "bias" is wqkv's and wo's only: its MLP (w1, w2, w3) has none. */
    if (mt && strcmp(mt, "internlm2") == 0)
        mlp_bias = false;
    if (mt && strcmp(mt, "phi3small") == 0 && pm_obj_has(o, "attention_bias")) {
        /* Phi-3-small's query_key_value and dense are nn.Linear with the default bias whatever
         * attention_bias says (HF modeling_phi3_small.py; vLLM builds them with bias=True). */
        pm_obj_declare(o, "attention_bias", PM_DIM_NONE);
        if ((st = note_value(o, "attention_bias", NAN, "ignored",
                             "ignored: model_type phi3small builds its attention projections "
                             "with biases whatever it says")) != PM_OK ||
            (st = note_value(o, "qkv_bias", 1, "derived", "the family's default")) != PM_OK)
            return st;
        m->qkv_bias = m->o_bias = true;
        m->mlp_bias = true;
        *all_key_out = all_key;
        return pm_obj_bool(o, "mlp_bias", false, &m->mlp_bias);
    }
    if ((st = pm_obj_bool(o, "attention_bias", false, &attn_bias)) != PM_OK ||
        (st = pm_obj_bool(o, "qkv_bias", false, &qkv_bias)) != PM_OK ||
        (st = pm_obj_bool(o, "mlp_bias", false, &mlp_bias)) != PM_OK)
        return st;
    if (pm_obj_has(o, "attention_bias") && !pm_obj_has(o, "qkv_bias"))
        qkv_bias = attn_bias;
    if (gpt_oss && !pm_obj_has(o, "mlp_bias"))
        mlp_bias = true; /* the experts' biases whatever attention_bias says */
    /* GLM-4.5's attention_bias is Q's, K's and V's: its o_proj has none (modeling_glm4_moe). */
    if (mt && strcmp(mt, "glm4_moe") == 0)
        attn_bias = false;
    /* StableLM's key for the Q, K and V biases (StableLmConfig.use_qkv_bias, false by
     * default; StableLM 2 sets it). */
    if (mt && strcmp(mt, "stablelm") == 0 &&
        (st = pm_obj_bool(o, "use_qkv_bias", false, &qkv_bias)) != PM_OK)
        return st;
    m->qkv_bias = qkv_bias;
    m->o_bias = attn_bias;
    m->mlp_bias = mlp_bias;
    *all_key_out = all_key;
    return PM_OK;
}

/* Parallel attention and MLP blocks: the family's default, or its key. */
static pm_status read_parallel(pm_obj *o, pm_model *m, bool hf, const char *mt, bool new_arch)
{
    pm_status st;
    bool par = hf && in_list(mt, parallel_families, PM_ARRAY_LEN(parallel_families));
    if (hf && mt && strcmp(mt, "gpt_neox") == 0)
        par = true; /* GPTNeoXConfig's use_parallel_residual defaults to true */
    if (hf && mt && strcmp(mt, "falcon") == 0)
        par = true; /* FalconConfig's parallel_attn defaults to true */
    if ((st = pm_obj_bool(o, "parallel_attn", false, &par)) != PM_OK ||
        (hf && (st = pm_obj_bool(o, "use_parallel_residual", false, &par)) != PM_OK))
        return st;
    if (new_arch)
        par = true; /* Falcon-40B/180B: parallel attention with two norms */
    m->parallel_block = par;
    static const char *const k_par[] = {"parallel_attn", "use_parallel_residual"};
    if (!first_present(o, k_par, 2) &&
        ((st = note_value(o, "parallel_attn", par, hf ? "derived" : "defaulted",
                          new_arch ? "new_decoder_architecture: parallel attention and MLP"
                          : par    ? "model_type: this family runs attention and MLP in parallel"
                                   : "sequential attention and MLP blocks")) != PM_OK))
        return st;
    return PM_OK;
}

/* Records the biases the file did not give, with where they came from. */
static pm_status note_biases(pm_obj *o, const pm_model *m, bool hf, const char *all_key)
{
    pm_status st;
    const char *bias_why = hf ? "the family's default" : "none (the native format's default)";
    if ((!pm_obj_has(o, "attention_bias") && !pm_obj_has(o, "qkv_bias") &&
         !pm_obj_has(o, "use_qkv_bias") &&
         (st = note_value(o, "qkv_bias", m->qkv_bias, hf ? "derived" : "defaulted",
                          all_key ? all_key : bias_why)) != PM_OK) ||
        (!pm_obj_has(o, "attention_bias") &&
         (st = note_value(o, "attention_bias", m->o_bias, hf ? "derived" : "defaulted",
                          all_key ? all_key : bias_why)) != PM_OK) ||
        (!pm_obj_has(o, "mlp_bias") &&
         (st = note_value(o, "mlp_bias", m->mlp_bias, hf ? "derived" : "defaulted",
                          all_key ? all_key : bias_why)) != PM_OK))
        return st;
    /* A family whose attention_bias leaves O without one (GLM-4.5). */
    if (pm_obj_has(o, "attention_bias") && m->qkv_bias && !m->o_bias &&
        (st = note_value(o, "o_bias", 0, "derived",
                         "model_type: attention_bias is Q's, K's and V's; o_proj has none")) !=
            PM_OK)
        return st;
    return PM_OK;
}

static pm_status read_model_fields(pm_obj *o, const hf_layout *l, pm_model *m, bool hf)
{
    pm_status st;
    static const char *const k_layers[] = {"num_hidden_layers", "n_layer", "num_layers"};
    static const char *const k_hidden[] = {"hidden_size", "n_embd", "d_model"};
    static const char *const k_heads[] = {"num_attention_heads", "n_head"};
    /* Native files use the canonical names only. */
    const size_t n_alias = hf ? 3 : 1;
    if ((st = int_names(o, l, k_layers, n_alias, "n_layers", true, &m->layers)) != PM_OK ||
        (st = int_alias(o, k_hidden, n_alias, true, &m->hidden)) != PM_OK ||
        (st = int_names(o, l, k_heads, hf ? 2 : 1, "n_heads", true, &m->heads)) != PM_OK)
        return st;
    const char *mt = hf ? l->family : NULL;

    bool new_arch = false;
    const char *kv_key = NULL, *all_key = NULL;
    if ((st = read_kv_heads(o, l, m, hf, mt, &new_arch, &kv_key)) != PM_OK ||
        (st = read_head_dim(o, m, mt)) != PM_OK || (st = read_mlp_shape(o, l, m, hf)) != PM_OK ||
        (st = read_gate_and_tie(o, m, hf, mt)) != PM_OK ||
        (st = read_biases(o, m, hf, mt, &all_key)) != PM_OK ||
        (st = read_parallel(o, m, hf, mt, new_arch)) != PM_OK ||
        (st = note_biases(o, m, hf, all_key)) != PM_OK)
        return st;
    if ((st = read_window(o, m, hf, mt)) != PM_OK ||
        (st = read_moe(l->ffn, m, mt, l->dbrx)) != PM_OK)
        return st;

    if (m->heads % m->kv_heads != 0)
        return pm_obj_fail(l->attn, kv_key ? kv_key : "num_key_value_heads", PM_ERR_INCONSISTENT,
                           "must divide num_attention_heads (got %d KV heads, %d attention heads)",
                           m->kv_heads, m->heads);
    return PM_OK;
}

/* Refuses what DBRX's nested configs may say that changes cost in a way not modelled: a window
 * (attn_config.sliding_window_size above 0) and an MLP other than the dropless GLU experts
 * (ffn_config.ffn_type other than "mb_dmoe", ffn_config.mlp_type other than "glu"). */
static pm_status dbrx_refuse(pm_obj *attn, pm_obj *ffn)
{
    pm_obj_declare(attn, "sliding_window_size", PM_DIM_NONE);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(attn->json, "sliding_window_size");
    if (cJSON_IsNumber(w) && w->valuedouble > 0)
        return pm_obj_fail(attn, "sliding_window_size", PM_ERR_UNSUPPORTED,
                           "a window in DBRX's attn_config is not modelled (-1: none)");
    static const char *const keys[] = {"ffn_type", "mlp_type"};
    static const char *const want[] = {"mb_dmoe", "glu"};
    for (size_t i = 0; i < 2; i++) {
        pm_obj_declare(ffn, keys[i], PM_DIM_NONE);
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(ffn->json, keys[i]);
        if (it && !(cJSON_IsString(it) && strcmp(it->valuestring, want[i]) == 0))
            return pm_obj_fail(ffn, keys[i], PM_ERR_UNSUPPORTED,
                               "only DBRX's dropless GLU experts are modelled (%s \"%s\")",
                               keys[i], want[i]);
    }
    return PM_OK;
}

/* The layout of the HuggingFace model object mo: DBRX's nested attn_config and ffn_config
 * opened into attn and ffn (required), or mo itself for every other family, which may not
 * have them (MPT's attn_config and ffn_config are another layout, not modelled). */
static pm_status hf_open_layout(pm_obj *mo, pm_obj *attn, pm_obj *ffn, hf_layout *l)
{
    static const char *const nested[] = {"attn_config", "ffn_config"};
    const char *mt = json_string(mo->json, "model_type");
    l->attn = l->ffn = mo;
    l->dbrx = mt && strcmp(mt, "dbrx") == 0;
    for (size_t i = 0; i < 2 && !l->dbrx; i++)
        if (hf_feature_on(cJSON_GetObjectItemCaseSensitive(mo->json, nested[i])))
            return pm_obj_fail(mo, nested[i], PM_ERR_UNSUPPORTED,
                               "a nested %s is read only for model_type \"dbrx\" (model_type "
                               "\"%s\"'s is not modelled)",
                               nested[i], mt ? mt : "");
    if (!l->dbrx)
        return PM_OK;
    pm_obj *kids[] = {attn, ffn};
    for (size_t i = 0; i < 2; i++) {
        pm_status st = pm_obj_child(mo, nested[i], true, kids[i], NULL);
        if (st != PM_OK)
            return st;
        kids[i]->lenient = true;
    }
    l->attn = attn;
    l->ffn = ffn;
    return dbrx_refuse(attn, ffn);
}

/* The weights' bits and kind a quantization_config states by its method alone. */
static const struct {
    const char *method;
    double bits;
    bool is_float;
} quant_fixed[] = {
    {"fp8", 8, true},    /* transformers' FineGrainedFP8Config (DeepSeek-V3, Qwen3-FP8) */
    {"fbgemm_fp8", 8, true},
    {"mxfp4", 4, true},  /* gpt-oss: MXFP4 experts */
    {"eetq", 8, false},
    {"bitnet", 2, false}, /* ternary weights, four to a byte */
};

/* The bits and kind of compressed-tensors' weights: every group of config_groups that
 * quantises weights must state the same num_bits and type, else the format is mixed (0). */
static void quant_groups(const cJSON *q, pm_model *m)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(q, "config_groups");
    double bits = 0.0;
    bool is_float = false, first = true;
    for (const cJSON *g = cJSON_IsObject(groups) ? groups->child : NULL; g; g = g->next) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(g, "weights");
        if (!cJSON_IsObject(w))
            continue; /* a group that quantises only activations or the KV cache */
        const cJSON *nb = cJSON_GetObjectItemCaseSensitive(w, "num_bits");
        const char *type = json_string(w, "type");
        const double b = cJSON_IsNumber(nb) ? nb->valuedouble : 0.0;
        const bool f = type && strcmp(type, "float") == 0;
        if (first) {
            bits = b;
            is_float = f;
            first = false;
        } else if (b < bits || b > bits || f != is_float) {
            bits = 0.0;
        }
    }
    m->quant_bits = bits;
    m->quant_float = bits > 0 && is_float;
}

/* The checkpoint's weight format from a HuggingFace quantization_config (of the config, or of
 * its text_config), or mlx's quantization block: the method (transformers' quant_method; "mlx"
 * for mlx-lm's block, which it also copies into quantization_config without a quant_method) and,
 * where the method or its keys state them, the stored weights' bits and kind. What is modelled
 * stays the workload's weight_dtype; pm_scenario_warning compares the two. */
static pm_status hf_read_quantization(pm_obj *o, pm_obj *text, bool wrapped, pm_model *m)
{
    pm_obj *host = NULL;
    const char *key = NULL;
    for (int w = 0; w <= (int)wrapped && !host; w++) {
        pm_obj *ob = w ? text : o;
        pm_obj_declare(ob, "quantization_config", PM_DIM_NONE); /* null: not quantised */
        for (int k = 0; k < 2 && !host; k++) {
            const char *name = k ? "quantization" : "quantization_config";
            const cJSON *it = cJSON_GetObjectItemCaseSensitive(ob->json, name);
            if (it && !cJSON_IsNull(it)) {
                host = ob;
                key = name;
            }
        }
    }
    if (!host)
        return PM_OK;
    const bool mlx = pm_obj_has(host, "quantization");
    if (mlx)
        pm_obj_declare(host, "quantization", PM_DIM_NONE);
    pm_obj q;
    const char *method = mlx ? "mlx" : NULL;
    pm_status st = pm_obj_child(host, key, true, &q, NULL);
    if (st != PM_OK || (st = pm_obj_string(&q, "quant_method", !mlx, &method)) != PM_OK ||
        (st = pm_obj_name_fits(&q, "quant_method", method, sizeof m->quant_method)) != PM_OK)
        return st;
    pm_strlcpy(m->quant_method, method, sizeof m->quant_method);
    for (size_t i = 0; i < PM_ARRAY_LEN(quant_fixed); i++)
        if (strcmp(method, quant_fixed[i].method) == 0) {
            m->quant_bits = quant_fixed[i].bits;
            m->quant_float = quant_fixed[i].is_float;
        }
    long bits = 0;
    bool b4 = false, b8 = false;
    if (strcmp(method, "awq") == 0 || strcmp(method, "gptq") == 0 || strcmp(method, "mlx") == 0) {
        if ((st = pm_obj_int(&q, "bits", true, 1, 16, &bits)) != PM_OK)
            return st;
        m->quant_bits = (double)bits;
        /* mlx's mode: "affine" (integers, the default) or a float format ("mxfp4") */
        const char *mode = mlx ? json_string(q.json, "mode") : NULL;
        m->quant_float = mode && strstr(mode, "fp") != NULL;
    } else if (strcmp(method, "bitsandbytes") == 0) {
        if ((st = pm_obj_bool(&q, "load_in_4bit", false, &b4)) != PM_OK ||
            (st = pm_obj_bool(&q, "load_in_8bit", false, &b8)) != PM_OK)
            return st;
        m->quant_bits = b4 && !b8 ? 4.0 : b8 && !b4 ? 8.0 : 0.0;
    } else if (strcmp(method, "compressed-tensors") == 0) {
        quant_groups(q.json, m);
    } else if (strcmp(method, "modelopt") == 0) { /* NVIDIA ModelOpt's quant_algo */
        const char *algo = json_string(q.json, "quant_algo");
        const bool fp8 = algo && strcmp(algo, "FP8") == 0, fp4 = algo && strcmp(algo, "NVFP4") == 0;
        m->quant_bits = fp8 ? 8.0 : fp4 ? 4.0 : 0.0;
        m->quant_float = fp8 || fp4;
    }
    char why[200];
    if (m->quant_bits > 0)
        snprintf(why, sizeof why,
                 "the checkpoint's weights: %g-bit %s (quant_method \"%s\"); the workload's "
                 "weight_dtype is what is modelled (a warning when they differ)",
                 m->quant_bits, m->quant_float ? "floats" : "integers", method);
    else
        snprintf(why, sizeof why,
                 "the checkpoint's weights: quantised by quant_method \"%s\", in a format the "
                 "reader does not size; the workload's weight_dtype is what is modelled (a "
                 "warning)",
                 method);
    return pm_obj_record(host, key, m->quant_bits > 0 ? m->quant_bits : NAN, "1", why,
                         "ignored");
}

/* The model's name: its "name"; in a HuggingFace file without one, the checkpoint's
 * (_name_or_path: the last part of a path that does not fit, "meta-llama/Llama-3.1-8B" stays
 * whole) or its model_type. A name that does not fit is refused, never cut. */
static pm_status hf_model_name(pm_obj *o, bool hf, bool kind_given, pm_model *m)
{
    pm_strlcpy(m->name, "model", sizeof m->name);
    if (!pm_obj_has(o, "name") && hf) {
        const char *key = "_name_or_path", *name = json_string(o->json, key);
        if (!name || !name[0])
            name = json_string(o->json, key = "model_type");
        if (!name || !name[0])
            return PM_OK;
        const char *slash = strrchr(name, '/');
        if (strlen(name) >= sizeof m->name && slash && slash[1])
            name = slash + 1;
        pm_status st = pm_obj_name_fits(o, key, name, sizeof m->name);
        if (st == PM_OK)
            pm_strlcpy(m->name, name, sizeof m->name);
        return st;
    }
    return pm_obj_name(o, "name", !hf && kind_given, m->name, sizeof m->name);
}

pm_status pm_model_read(pm_obj *o, pm_model *m)
{
    memset(m, 0, sizeof *m);
    bool hf = !pm_obj_has(o, "kind") &&
              (pm_obj_has(o, "model_type") || pm_obj_has(o, "architectures") ||
               pm_obj_has(o, "transformers_version"));
    o->lenient = hf;
    pm_status st;
    const char *s = NULL;
    if ((st = pm_obj_string(o, "kind", false, &s)) != PM_OK)
        return st;
    if (s && strcmp(s, "model") != 0)
        return pm_fail(o->err, PM_ERR_VALUE, o->file, "$.kind",
                       "expected \"model\" here (got \"%s\")", s);
    if ((st = hf_model_name(o, hf, s != NULL, m)) != PM_OK)
        return st;
    const char *src = NULL;
    if ((st = pm_obj_string(o, "source", !hf && s != NULL, &src)) != PM_OK)
        return st;
    if (src)
        o->file_source = src;
    pm_obj_declare(o, "description", PM_DIM_NONE);
    pm_obj_declare(o, "notes", PM_DIM_NONE);
    if (!hf) {
        const hf_layout native = {o, o, false, NULL};
        if ((st = read_model_fields(o, &native, m, false)) != PM_OK)
            return st;
        return pm_obj_finish(o);
    }
    /* A multimodal wrapper (Llama-4, Gemma-3, LLaVA): the text model is under text_config; the
     * vision tower is not modelled. */
    pm_obj text;
    bool wrapped = false;
    if ((st = pm_obj_child(o, "text_config", false, &text, &wrapped)) != PM_OK)
        return st;
    pm_obj *mo = o;
    if (wrapped) {
        text.lenient = true;
        mo = &text;
    }
    pm_obj attn, ffn;
    hf_layout l;
    if ((st = hf_refuse(o)) != PM_OK || (wrapped && (st = hf_refuse(mo)) != PM_OK) ||
        (st = hf_check_family(o, &text, wrapped)) != PM_OK ||
        (st = hf_check_aliases(mo)) != PM_OK ||
        (st = hf_open_layout(mo, &attn, &ffn, &l)) != PM_OK)
        return st;
    /* A wrapper whose text_config names no family: the wrapper's text family. */
    l.family = json_string(mo->json, "model_type");
    if (!l.family && wrapped) {
        const char *wmt = json_string(o->json, "model_type");
        const hf_family *tf = hf_family_of(wmt);
        l.family = tf ? tf->name : wmt;
    }
    if ((st = read_model_fields(mo, &l, m, true)) != PM_OK ||
        (st = hf_read_quantization(o, &text, wrapped, m)) != PM_OK)
        return st;
    if (l.dbrx && ((st = hf_finish(&attn, NULL)) != PM_OK || (st = hf_finish(&ffn, NULL)) != PM_OK))
        return st;
    if (wrapped && (st = hf_finish(mo, NULL)) != PM_OK)
        return st;
    return hf_finish(o, wrapped ? "a multimodal wrapper's key: only the text model "
                                  "(text_config) is modelled, the vision tower is not"
                                : NULL);
}

bool pm_model_layer_is_local(const pm_model *m, int layer)
{
    if (!m || (m->sliding_window < 1 && m->sparse_block < 1) || layer < 0)
        return false;
    const int period = m->window_period >= 1 && m->window_period <= 64 ? m->window_period : 1;
    if (m->local_mask == 0)
        return true;
    return (m->local_mask >> (layer % period)) & 1u;
}

int pm_model_local_layers(const pm_model *m)
{
    if (!m || (m->sliding_window < 1 && m->sparse_block < 1))
        return 0;
    const int period = m->window_period >= 1 && m->window_period <= 64 ? m->window_period : 1;
    int per_period = 0, rest = 0;
    for (int i = 0; i < period; i++) {
        const bool local = pm_model_layer_is_local(m, i);
        per_period += local;
        rest += local && i < m->layers % period;
    }
    return (m->layers / period) * per_period + rest;
}

/* ---------------------------------------------------------------- accelerator */

/* An optional object of the accelerator ("area", "energy", "cost"): *present says whether it is
 * there; c is opened on it, knowing where o's keys came from. */
static pm_status open_block(pm_obj *o, const char *key, pm_obj *c, bool *present)
{
    *present = false;
    pm_status st = pm_obj_child(o, key, false, c, present);
    return st;
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
    if ((st = quantity(&c, "process", PM_DIM_LENGTH, true, POSITIVE, &a->process_nm)) ||
        (st = quantity(&c, "compute", PM_DIM_AREA_PER_COMPUTE, true, NONNEGATIVE,
                              &a->compute_mm2_per_flop_per_s)) ||
        (st = quantity(&c, "l2", PM_DIM_AREA_PER_BYTE, true, NONNEGATIVE,
                              &a->l2_mm2_per_byte)) ||
        (st = quantity(&c, "hbm_phy", PM_DIM_AREA_PER_ITEM, true, NONNEGATIVE,
                              &a->hbm_phy_mm2_per_stack)) ||
        (st = pm_obj_int(&c, "hbm_stacks", true, 0, 64, &stacks)) ||
        (st = quantity(&c, "link_phy", PM_DIM_AREA_PER_ITEM, true, NONNEGATIVE,
                              &a->link_phy_mm2_per_link)) ||
        (st = pm_obj_int(&c, "links", true, 0, 1024, &links)) ||
        (st = quantity(&c, "other", PM_DIM_AREA, true, NONNEGATIVE, &a->other_mm2)))
        return st;
    a->hbm_stacks = (int)stacks;
    a->links = (int)links;
    return pm_obj_finish(&c);
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
    if ((st = quantity(&c, "hbm", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                       &e->hbm_J_per_byte)) ||
        (st = quantity(&c, "l2_write", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                       &e->l2_write_J_per_byte)) ||
        (st = quantity(&c, "l2_read", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                       &e->l2_read_J_per_byte)) ||
        (st = quantity(&c, "link", PM_DIM_ENERGY_PER_BYTE, true, NONNEGATIVE,
                       &e->link_J_per_byte)) ||
        (st = quantity(&c, "static", PM_DIM_POWER, false, NONNEGATIVE, &e->static_W)) ||
        (st = quantity(&c, "leakage", PM_DIM_POWER_PER_AREA, false, NONNEGATIVE,
                       &e->leakage_W_per_mm2)) ||
        (st = quantity(&c, "board_power", PM_DIM_POWER, false, POSITIVE, &e->board_power_W)) ||
        (st = pm_obj_child(&c, "mac", true, &mc, NULL)))
        return st;
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        e->mac_J[d] = -1.0; /* absent */
        if ((st = quantity(&mc, pm_dtype_name((pm_dtype)d), PM_DIM_ENERGY, false, NONNEGATIVE,
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
    if ((st = quantity(&c, "wafer", PM_DIM_MONEY, true, POSITIVE, &k->wafer_usd)) ||
        (st = quantity(&c, "wafer_diameter", PM_DIM_LENGTH_MM, true, POSITIVE,
                       &k->wafer_diameter_mm)) ||
        (st = quantity(&c, "defect_density", PM_DIM_PER_AREA, true, NONNEGATIVE,
                       &k->defect_density_per_mm2)) ||
        (st = pm_obj_enum(&c, "yield_model", false, yield_names, n_yield, &model)) ||
        (st = quantity(&c, "hbm", PM_DIM_MONEY_PER_BYTE, true, NONNEGATIVE,
                       &k->hbm_usd_per_byte)) ||
        (st = quantity(&c, "package", PM_DIM_MONEY, true, NONNEGATIVE, &k->package_usd)))
        return st;
    long dies = 1;
    if ((st = pm_obj_int(&c, "dies_per_package", false, 1, 1024, &dies)) != PM_OK)
        return st;
    k->dies_per_package = (int)dies;
    k->yield_model = (pm_yield_model)model;
    /* Read by the negative binomial only; kept (and checked) with the others, so that
     * --set accelerator.cost.yield_model=poisson works on a file that gives it. */
    const bool nb = k->yield_model == PM_YIELD_NEGATIVE_BINOMIAL;
    if ((st = pm_obj_number(&c, "yield_alpha", nb, (pm_range){0.0, 1e6, true, false},
                            &k->yield_alpha)) != PM_OK)
        return st;
    if (!acc->area.present)
        return pm_obj_fail(o, "cost", PM_ERR_INCONSISTENT,
                           "needs the accelerator's \"area\" object (the die cost follows the "
                           "modelled die area)");
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

    pm_obj pc;
    if ((st = pm_obj_child(o, "peak_compute", true, &pc, NULL)) != PM_OK)
        return st;
    bool any = false;
    for (int d = 0; d < PM_DTYPE_COUNT; d++) {
        if ((st = quantity(&pc, pm_dtype_name((pm_dtype)d), PM_DIM_COMPUTE, false, POSITIVE,
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
        if ((st = quantity(&ce, pm_dtype_name((pm_dtype)d), PM_DIM_FRACTION, false,
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

    a->l2_usable_frac = 1.0;
    if ((st = quantity(o, "compute_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                              &a->compute_efficiency_frac)) ||
        (st = quantity(o, "hbm_capacity", PM_DIM_BYTES, true, POSITIVE,
                              &a->hbm_capacity_bytes)) ||
        (st = quantity(o, "hbm_bandwidth", PM_DIM_BANDWIDTH, true, POSITIVE,
                              &a->hbm_bandwidth_bytes_per_s)) ||
        (st = quantity(o, "hbm_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                              &a->hbm_efficiency_frac)) ||
        (st = quantity(o, "kernel_hbm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &a->kernel_hbm_efficiency_frac)) ||
        (st = quantity(o, "attention_hbm_efficiency", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &a->attention_hbm_efficiency_frac)) ||
        (st = quantity(o, "attention_compute_efficiency", PM_DIM_FRACTION, false,
                              PM_RANGE_FRACTION, &a->attention_compute_efficiency_frac)) ||
        (st = quantity(o, "attention_latency", PM_DIM_TIME, false, NONNEGATIVE,
                              &a->attention_latency_s)) ||
        (st = quantity(o, "dequant_rate", PM_DIM_COMPUTE, false, NONNEGATIVE,
                              &a->dequant_elem_per_s)) ||
        (st = quantity(o, "l2_capacity", PM_DIM_BYTES, true, POSITIVE,
                              &a->l2_capacity_bytes)) ||
        (st = quantity(o, "l2_bandwidth", PM_DIM_BANDWIDTH, true, POSITIVE,
                              &a->l2_bandwidth_bytes_per_s)) ||
        (st = quantity(o, "l2_usable", PM_DIM_FRACTION, false, PM_RANGE_FRACTION,
                              &a->l2_usable_frac)) ||
        (st = quantity(o, "kv_strided_efficiency", PM_DIM_FRACTION, true, PM_RANGE_FRACTION,
                              &a->kv_strided_efficiency_frac)) ||
        (st = quantity(o, "kernel_launch", PM_DIM_TIME, true, NONNEGATIVE,
                              &a->kernel_launch_s)) ||
        (st = quantity(o, "chunk_half_efficiency", PM_DIM_BYTES, true, NONNEGATIVE,
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
        (st = read_cost(o, a, &a->cost)) != PM_OK)
        return st;
    return pm_obj_finish(o);
}

/* ---------------------------------------------------------------- cluster */

pm_status pm_cluster_read(pm_obj *o, pm_cluster *c)
{
    memset(c, 0, sizeof *c);
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
    if ((st = read_platform(o, c->platform, sizeof c->platform, NULL, NULL, 0)) != PM_OK)
        return st;
    long devices = 0;
    int topo = 0, algo = PM_AR_AUTO;
    size_t n_topo, n_algo;
    const char *const *topo_names = pm_topology_names(&n_topo);
    const char *const *algo_names = pm_allreduce_algo_names(&n_algo);
    if ((st = pm_obj_int(o, "devices", true, 1, PM_MAX_DEVICES, &devices)) ||
        (st = pm_obj_enum(o, "topology", true, topo_names, n_topo, &topo)) ||
        (st = pm_obj_enum(o, "allreduce", false, algo_names, n_algo, &algo)) ||
        (st = quantity(o, "link_bandwidth", PM_DIM_BANDWIDTH, true, POSITIVE,
                              &c->link_bandwidth_bytes_per_s)) ||
        (st = quantity(o, "link_latency", PM_DIM_TIME, true, NONNEGATIVE,
                              &c->link_latency_s)) ||
        (st = optional_quantity(o, "fused_latency", PM_DIM_TIME, NONNEGATIVE,
                                &c->fused_latency_s, "fused_latency_us", c->link_latency_s, "s",
                                "= link_latency_us (no separate start-up for the fused kernel)")) ||
        (st = optional_quantity(o, "allreduce_efficiency", PM_DIM_FRACTION, PM_RANGE_FRACTION,
                                &c->allreduce_efficiency_frac, "allreduce_efficiency_frac", 1.0,
                                "1", "1: an allreduce's bytes move at the whole link bandwidth")))
        return st;
    c->devices = (int)devices;
    c->topology = (pm_topology)topo;
    c->algorithm = (pm_allreduce_algo)algo;
    bool hier = c->topology == PM_TOPO_HIERARCHICAL;
    long per_node = c->devices;
    if ((st = pm_obj_int(o, "devices_per_node", hier, 1, PM_MAX_DEVICES, &per_node)) ||
        (st = quantity(o, "inter_node_bandwidth", PM_DIM_BANDWIDTH, hier, POSITIVE,
                              &c->inter_node_bandwidth_bytes_per_s)) ||
        (st = quantity(o, "inter_node_latency", PM_DIM_TIME, hier, NONNEGATIVE,
                              &c->inter_node_latency_s)))
        return st;
    c->devices_per_node = (int)per_node;
    /* A hierarchy's nodes: their links decide the intra-node phases (a ring by default). */
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
        (st = note_value(o, "intra_node_topology", PM_TOPO_RING, "defaulted",
                         "ring: the intra-node reduce-scatter and all-gather step around a "
                         "ring")) != PM_OK)
        return st;
    c->intra_node_topology = (pm_topology)intra;
    long ep = 1;
    if ((st = pm_obj_int(o, "expert_parallel", false, 1, PM_MAX_DEVICES, &ep)) ||
        (!pm_obj_has(o, "expert_parallel") &&
         (st = note_value(o, "expert_parallel", 1, "defaulted",
                          "1: the experts tensor parallel over every device"))) ||
        (st = optional_quantity(o, "a2a_latency", PM_DIM_TIME, NONNEGATIVE, &c->a2a_latency_s,
                                "a2a_latency_us", c->link_latency_s, "s",
                                hier ? "= link_latency_us (inter_node_latency_us across nodes)"
                                     : "= link_latency_us")) ||
        (st = optional_quantity(o, "a2a_efficiency", PM_DIM_FRACTION, PM_RANGE_FRACTION,
                                &c->a2a_efficiency_frac, "a2a_efficiency_frac", 1.0, "1",
                                "1: an all-to-all reaches the whole link bandwidth")))
        return st;
    c->expert_parallel = (int)ep;
    long max_dev = 0;
    if ((st = pm_obj_int(o, "max_devices", false, 1, PM_MAX_DEVICES, &max_dev)) != PM_OK)
        return st;
    c->max_devices = (int)max_dev;
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
    w->allreduce_dtype_given = rd >= 0;
    if (rd >= 0)
        w->allreduce_dtype = (pm_dtype)rd;
    return pm_obj_finish(o);
}

/* ---------------------------------------------------------------- consistency */

static bool finite_pos(double x) { return isfinite(x) && x > 0; }
static bool finite_nonneg(double x) { return isfinite(x) && x >= 0; }
static bool frac_ok(double x) { return x > 0 && x <= 1; }

/* Dimensions of the model, alone. */
static pm_status check_model(const pm_model *m, pm_error *err)
{
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->head_dim < 1 ||
        m->intermediate < 1 || m->vocab < 1)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model",
                       "every model dimension must be >= 1");
    if (m->heads % m->kv_heads != 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.model.num_key_value_heads",
                       "must divide num_attention_heads (got %d KV heads, %d attention heads)",
                       m->kv_heads, m->heads);
    if (m->sliding_window < 0 || m->window_period < 0 || m->window_period > 64 ||
        m->max_position_embeddings < 0)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.sliding_window",
                       "the window must be >= 0 tokens and its period in [0, 64] layers (got %d "
                       "tokens, period %d)",
                       m->sliding_window, m->window_period);
    if (m->sparse_block < 0 ||
        (m->sparse_block > 0 && (m->sparse_local_blocks < 1 || m->sparse_vert_stride < 1 ||
                                 (double)m->sparse_block * m->sparse_local_blocks >
                                     PM_MAX_MODEL_DIM)))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.blocksparse_block_size",
                       "block-sparse attention needs blocks >= 1 position, local blocks and a "
                       "vertical stride >= 1 (got block %d, %d local blocks, stride %d)",
                       m->sparse_block, m->sparse_local_blocks, m->sparse_vert_stride);
    if (m->sparse_block > 0 && (m->sliding_window > 0 || m->kv_lora_rank > 0))
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.model.blocksparse_block_size",
                       "block-sparse attention with %s is not modelled",
                       m->sliding_window > 0 ? "a sliding window" : "latent attention (MLA)");
    if (m->kv_lora_rank < 0 || m->q_lora_rank < 0 || m->qk_rope_head_dim < 0 ||
        (m->kv_lora_rank > 0 && (m->qk_nope_head_dim < 1 || m->v_head_dim < 1)))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.kv_lora_rank",
                       "MLA needs qk_nope_head_dim and v_head_dim >= 1 and no negative rank "
                       "(got kv_lora_rank %d, q_lora_rank %d, qk_nope_head_dim %d, "
                       "qk_rope_head_dim %d, v_head_dim %d)",
                       m->kv_lora_rank, m->q_lora_rank, m->qk_nope_head_dim,
                       m->qk_rope_head_dim, m->v_head_dim);
    if (m->experts < 0 || m->experts > PM_MAX_EXPERTS ||
        (m->experts > 0 &&
         (m->experts_per_token < 1 || m->experts_per_token > m->experts ||
          m->expert_intermediate < 1 || m->shared_experts < 0 || m->shared_intermediate < 0 ||
          (m->shared_experts > 0 && m->shared_intermediate < 1) || m->moe_first_layer < 0 ||
          m->moe_period < 0 || m->moe_period > 64 || m->moe_phase < 0 ||
          m->moe_phase >= (m->moe_period > 0 ? m->moe_period : 1))))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.model.num_experts",
                       "a MoE model needs 1 <= num_experts <= %d, 1 <= num_experts_per_tok <= "
                       "num_experts, expert widths >= 1 and a layer period in [1, 64] (got %d "
                       "experts, top-%d, width %d, period %d, phase %d)",
                       PM_MAX_EXPERTS, m->experts, m->experts_per_token,
                       m->expert_intermediate, m->moe_period, m->moe_phase);
    if (m->experts > 0 && m->parallel_block)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.model.num_experts",
                       "experts with parallel attention and MLP blocks are not modelled");
    return PM_OK;
}

/* Fractions, bandwidths, capacities and times of the accelerator, alone. */
static pm_status check_accelerator(const pm_accelerator *a, pm_error *err)
{
    if (!frac_ok(a->compute_efficiency_frac) || !frac_ok(a->hbm_efficiency_frac) ||
        !frac_ok(a->l2_usable_frac) || !frac_ok(a->kv_strided_efficiency_frac) ||
        !(a->kernel_hbm_efficiency_frac >= 0.0 && a->kernel_hbm_efficiency_frac <= 1.0) ||
        !(a->attention_hbm_efficiency_frac >= 0.0 && a->attention_hbm_efficiency_frac <= 1.0) ||
        !(a->attention_compute_efficiency_frac >= 0.0 &&
          a->attention_compute_efficiency_frac <= 1.0))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator",
                       "efficiency fractions must be in (0, 1]");
    for (int d = 0; d < PM_DTYPE_COUNT; d++)
        if (!(a->compute_efficiency_dtype_frac[d] >= 0.0 &&
              a->compute_efficiency_dtype_frac[d] <= 1.0))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator.compute_efficiency_by_dtype",
                           "%s: must be in (0, 1], or 0 for compute_efficiency_frac (got %g)",
                           pm_dtype_name((pm_dtype)d), a->compute_efficiency_dtype_frac[d]);
    if (!finite_pos(a->hbm_bandwidth_bytes_per_s) || !finite_pos(a->l2_bandwidth_bytes_per_s) ||
        !finite_pos(a->l2_capacity_bytes) || !finite_pos(a->hbm_capacity_bytes) ||
        !finite_nonneg(a->kernel_launch_s) || !finite_nonneg(a->chunk_half_efficiency_bytes) ||
        !finite_nonneg(a->attention_latency_s) || !finite_nonneg(a->dequant_elem_per_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.accelerator",
                       "bandwidths and capacities must be finite and > 0, times >= 0");
    if ((int)a->prefetch_consumer < 0 || a->prefetch_consumer > PM_CONSUMER_STREAM)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.accelerator.prefetch_consumer",
                       "bad prefetch_consumer value");
    return PM_OK;
}

/* The cluster alone: devices, links, the hierarchical parameters, and an algorithm the
 * topology can run. */
static pm_status check_cluster(const pm_cluster *c, pm_error *err)
{
    if (c->devices < 1)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.devices", "must be >= 1 (got %d)",
                       c->devices);
    if (!finite_pos(c->link_bandwidth_bytes_per_s) || !finite_nonneg(c->link_latency_s) ||
        !finite_nonneg(c->fused_latency_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                       "link bandwidth must be > 0 and latency >= 0");
    pm_status st = pm_allreduce_efficiency_check(c, err);
    if (st != PM_OK)
        return st;
    if ((int)c->topology < 0 || c->topology > PM_TOPO_HIERARCHICAL || (int)c->algorithm < 0 ||
        c->algorithm > PM_AR_RING_PIPELINED)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.cluster", "bad topology or algorithm");
    if (c->topology == PM_TOPO_HIERARCHICAL) {
        if (c->devices_per_node < 1 || c->devices % c->devices_per_node != 0)
            return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices_per_node",
                           "must divide devices (got %d per node, %d devices)",
                           c->devices_per_node, c->devices);
        if (!finite_pos(c->inter_node_bandwidth_bytes_per_s) ||
            !finite_nonneg(c->inter_node_latency_s))
            return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster",
                           "inter-node bandwidth must be > 0 and latency >= 0");
    }
    if (c->expert_parallel < 0 || c->devices % pm_cluster_ep(c) != 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "must divide devices (got %d ranks, %d devices)", c->expert_parallel,
                       c->devices);
    if (!finite_nonneg(c->a2a_latency_s))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.a2a_latency_us",
                       "must be finite and >= 0 (got %g us)", c->a2a_latency_s * 1e6);
    if (!(c->a2a_efficiency_frac >= 0.0 && c->a2a_efficiency_frac <= 1.0)) /* 0 acts as 1 */
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.cluster.a2a_efficiency_frac",
                       "must be in (0, 1], or 0 for 1 (got %g)", c->a2a_efficiency_frac);
    st = pm_allreduce_algo_check(c->topology, c->algorithm, err);
    if (st != PM_OK)
        return st;
    return PM_OK;
}

/* The magnitudes the model is defined for. The loaders enforce the same key by key; this
 * catches scenarios built or changed by hand (a sweep point, say). */
static pm_status check_magnitudes(const pm_accelerator *a, const pm_cluster *c, pm_error *err)
{
    const struct {
        const char *path;
        double v;
        pm_dimension dim;
    } q[] = {
        {"$.accelerator.hbm_bandwidth", a->hbm_bandwidth_bytes_per_s, PM_DIM_BANDWIDTH},
        {"$.accelerator.l2_bandwidth", a->l2_bandwidth_bytes_per_s, PM_DIM_BANDWIDTH},
        {"$.accelerator.l2_capacity", a->l2_capacity_bytes, PM_DIM_BYTES},
        {"$.accelerator.hbm_capacity", a->hbm_capacity_bytes, PM_DIM_BYTES},
        {"$.accelerator.kernel_launch", a->kernel_launch_s, PM_DIM_TIME},
        {"$.accelerator.attention_latency", a->attention_latency_s, PM_DIM_TIME},
        {"$.accelerator.chunk_half_efficiency", a->chunk_half_efficiency_bytes, PM_DIM_BYTES},
        {"$.accelerator.peak_compute.int8", a->peak_flop_per_s[PM_DTYPE_INT8], PM_DIM_COMPUTE},
        {"$.accelerator.peak_compute.fp8", a->peak_flop_per_s[PM_DTYPE_FP8], PM_DIM_COMPUTE},
        {"$.accelerator.peak_compute.bf16", a->peak_flop_per_s[PM_DTYPE_BF16], PM_DIM_COMPUTE},
        {"$.accelerator.peak_compute.fp16", a->peak_flop_per_s[PM_DTYPE_FP16], PM_DIM_COMPUTE},
        {"$.accelerator.peak_compute.fp32", a->peak_flop_per_s[PM_DTYPE_FP32], PM_DIM_COMPUTE},
        {"$.cluster.link_bandwidth", c->link_bandwidth_bytes_per_s, PM_DIM_BANDWIDTH},
        {"$.cluster.link_latency", c->link_latency_s, PM_DIM_TIME},
        {"$.cluster.fused_latency", c->fused_latency_s, PM_DIM_TIME},
        {"$.cluster.inter_node_bandwidth", c->inter_node_bandwidth_bytes_per_s,
         PM_DIM_BANDWIDTH},
        {"$.cluster.inter_node_latency", c->inter_node_latency_s, PM_DIM_TIME},
    };
    for (size_t i = 0; i < PM_ARRAY_LEN(q); i++) {
        if (!magnitude_ok(q[i].v, q[i].dim)) {
            const magnitude *mg = magnitude_of(q[i].dim);
            return pm_fail(err, PM_ERR_RANGE, NULL, q[i].path,
                           "must be %sin [%g, %g] %s, the range the model is defined for "
                           "(got %g)",
                           q[i].dim == PM_DIM_BANDWIDTH || strstr(q[i].path, "capacity")
                               ? ""
                               : "0 or ",
                           mg->lo, mg->hi, pm_unit_si_name(q[i].dim), q[i].v);
        }
    }
    return PM_OK;
}

/* The workload alone: sizes, the prompt it leaves, valid datatypes. */
static pm_status check_workload(const pm_workload *w, pm_error *err)
{
    if (w->batch < 1 || w->seq_len < 2 || !(w->prefill_frac > 0 && w->prefill_frac < 1))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.workload",
                       "batch >= 1, seq_len >= 2 and 0 < prefill_frac < 1 are required");
    pm_dtype ds[4] = {w->weight_dtype, w->kv_dtype, w->act_dtype, pm_allreduce_dtype(w)};
    for (int i = 0; i < 4; i++)
        if ((int)ds[i] < 0 || ds[i] >= PM_DTYPE_COUNT)
            return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.workload", "bad datatype");
    /* A W8A8 GEMM multiplies two operands of one 8-bit type: no kernel multiplies fp8 by
     * int8, so the pair would be modelled as a GEMM that does not exist. */
    const bool w8 = w->weight_dtype == PM_DTYPE_INT8 || w->weight_dtype == PM_DTYPE_FP8;
    const bool a8 = w->act_dtype == PM_DTYPE_INT8 || w->act_dtype == PM_DTYPE_FP8;
    if (w8 && a8 && w->weight_dtype != w->act_dtype)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.act_dtype",
                       "%s activations with %s weights: no GEMM multiplies an fp8 operand by "
                       "an int8 one; use one 8-bit type for both (W8A8) or wider activations "
                       "(weight-only quantisation)",
                       pm_dtype_name(w->act_dtype), pm_dtype_name(w->weight_dtype));
    int64_t prefill = pm_workload_prompt_tokens(w);
    if (prefill < 1 || prefill >= w->seq_len)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.workload.prefill_frac",
                       "leaves %lld prompt tokens of %lld: need at least one prompt token and one "
                       "decode step",
                       (long long)prefill, (long long)w->seq_len);
    return PM_OK;
}

/* The combinations: heads vs devices under the sharding, options, and a peak for the
 * compute datatype. */
static pm_status check_together(const pm_scenario *s, pm_error *err)
{
    const pm_model *m = &s->model;
    const pm_accelerator *a = &s->accel;
    const pm_cluster *c = &s->cluster;
    const pm_workload *w = &s->workload;
    const unsigned kv_mask = s->runtime.kv_dtype_mask;
    if (s->runtime.present && kv_mask != 0 && (int)w->kv_dtype >= 0 &&
        w->kv_dtype < PM_DTYPE_COUNT && !(kv_mask & (1u << w->kv_dtype))) {
        char have[64];
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.kv_dtype",
                       "runtime \"%s\" caches keys and values as %s (its kv_dtypes), not %s",
                       s->runtime.name, pm_dtype_list(kv_mask, have, sizeof have),
                       pm_dtype_name(w->kv_dtype));
    }
    if (s->runtime.present && s->runtime.mla_kv_cache == PM_MLA_CACHE_PER_HEAD &&
        m->kv_lora_rank > 0)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.runtime.mla_kv_cache",
                       "runtime \"%s\" does not cache %s's latent (\"per_head\": that engine "
                       "expands multi-head latent attention's keys and values per head), which "
                       "is not modelled: use a runtime that caches the latent (e.g. vllm-v1)",
                       s->runtime.name, m->name);
    if (s->options.sharding != PM_SHARDING_IDEAL && c->devices > m->heads)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices",
                       "%d devices exceed the model's %d attention heads: use fewer devices or "
                       "\"sharding\": \"ideal\"",
                       c->devices, m->heads);
    const int ep = pm_cluster_ep(c);
    if (s->runtime.present && ep > 1 && m->experts >= 1 &&
        s->runtime.expert_parallel == PM_EP_ALLREDUCE)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.runtime.expert_parallel",
                       "runtime \"%s\" runs expert parallelism over %d ranks with every "
                       "token on every rank and one allreduce (\"allreduce\": vLLM without "
                       "data-parallel attention), which is not modelled (only all-to-all "
                       "dispatch and combine are): use expert_parallel 1, or no runtime",
                       s->runtime.name, ep);
    if (ep > 1 && m->experts < 1)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "expert parallelism (%d ranks) needs a mixture-of-experts model (%s has "
                       "no experts)",
                       ep, m->name);
    if (m->experts > 0 && m->experts % ep != 0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.expert_parallel",
                       "must divide the model's %d routed experts (got %d ranks)", m->experts,
                       ep);
    if (!(w->routing_skew_alpha >= 0.0 && w->routing_skew_alpha <= 16.0))
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.workload.routing_skew_alpha",
                       "must be in [0, 16] (got %g)", w->routing_skew_alpha);
    if (w->distinct_sequences < 0 || w->distinct_sequences > w->batch)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.workload.distinct_sequences",
                       "must be in [1, batch = %d] (got %d)", w->batch, w->distinct_sequences);
    if (w->distinct_sequences > 0 && w->distinct_sequences < w->batch && ep > 1)
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.distinct_sequences",
                       "%d distinct sequences in a batch of %d under expert parallelism (%d "
                       "ranks): the busiest rank's load of identical tokens is not modelled",
                       w->distinct_sequences, w->batch, ep);
    if (m->experts < 1 && w->routing_skew_alpha > 0.0)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.workload.routing_skew_alpha",
                       "a routing skew (%g) needs a mixture-of-experts model (%s has no "
                       "experts): it would change nothing",
                       w->routing_skew_alpha, m->name);
    if ((int)s->options.sharding < 0 || s->options.sharding > PM_SHARDING_IDEAL)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, "$.sharding", "bad sharding value");
    if (s->options.fused_chunks < 0 || s->options.fused_chunks > 1024)
        return pm_fail(err, PM_ERR_RANGE, NULL, "$.options.fused_chunks",
                       "must be in [0, 1024] (got %d)", s->options.fused_chunks);
    pm_dtype cd = pm_compute_dtype(w);
    if (!(pm_peak_compute(a, cd) > 0)) {
        unsigned peaks = 0;
        for (int d = 0; d < PM_DTYPE_COUNT; d++)
            if (a->peak_flop_per_s[d] > 0)
                peaks |= 1u << d;
        char have[64];
        return pm_fail(err, PM_ERR_UNSUPPORTED, NULL, "$.workload.act_dtype",
                       "accelerator \"%s\" has no %s peak (it lists %s)", a->name,
                       pm_dtype_name(cd), pm_dtype_list(peaks, have, sizeof have));
    }
    return PM_OK;
}

/* An NVSwitch baseboard or a full mesh joins a fixed number of devices: beyond it the traffic
 * crosses another, slower network the cluster does not describe. Checked last, so that a
 * device count the model cannot split says so first. */
static pm_status check_cluster_size(const pm_cluster *c, pm_error *err)
{
    if (c->max_devices > 0 && c->devices > c->max_devices)
        return pm_fail(err, PM_ERR_INCONSISTENT, NULL, "$.cluster.devices",
                       "cluster %s (%s) joins at most %d devices (its max_devices; got %d): "
                       "more devices need a hierarchical cluster (devices_per_node, "
                       "inter_node_bandwidth), e.g. ascend-multinode",
                       c->name[0] ? c->name : "(inline)", pm_topology_name(c->topology),
                       c->max_devices, c->devices);
    return PM_OK;
}

pm_status pm_scenario_check(const pm_scenario *s, pm_error *err)
{
    if (!s)
        return pm_fail(err, PM_ERR_INVALID_ARG, NULL, NULL, "scenario is NULL");
    pm_status st;
    if ((st = check_model(&s->model, err)) != PM_OK ||
        (st = check_accelerator(&s->accel, err)) != PM_OK ||
        (st = check_cluster(&s->cluster, err)) != PM_OK ||
        (st = check_magnitudes(&s->accel, &s->cluster, err)) != PM_OK ||
        (st = check_workload(&s->workload, err)) != PM_OK ||
        (st = check_together(s, err)) != PM_OK)
        return st;
    return check_cluster_size(&s->cluster, err);
}
