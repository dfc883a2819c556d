/*
 * hf_family.c - the HuggingFace families: which model_type values this model represents, what
 * each family's configuration class builds when a key is left out, the keys each family reads
 * (a feature key of another family is refused), the keys refused as not modelled and those
 * known not to change cost, DBRX's nested layout and the quantization_config. The model reader
 * (read_model.c, read_attention.c) asks here; nothing here reads a field of pm_model but the
 * weights' quantisation.
 *
 * May call: error.c, json.c, read_fields.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "read.h"

/* Whether a HuggingFace key is given with a value that turns its feature on: not null, false,
 * 0 or an empty list (configs of dense models write "num_experts": null, say). */
bool pm_hf_feature_on(const cJSON *it)
{
    if (!it || cJSON_IsNull(it) || cJSON_IsFalse(it))
        return false;
    if (cJSON_IsNumber(it))
        return !(fabs(it->valuedouble) <= 0.0);
    if (cJSON_IsArray(it) || cJSON_IsObject(it))
        return it->child != NULL;
    return true;
}

pm_status pm_hf_refuse_unbuilt(pm_obj *o, const char *const *keys, size_t n, const char *what,
                               const char *why)
{
    for (size_t i = 0; i < n; i++)
        if (pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, keys[i])))
            return pm_obj_fail(o, keys[i], PM_ERR_UNSUPPORTED,
                               "\"%s\" describes %s, and this model has none (%s): nothing "
                               "would read it; remove the key, or give the keys that build them",
                               keys[i], what, why);
    return PM_OK;
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

pm_status pm_hf_check_aliases(pm_obj *o)
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
pm_status pm_hf_refuse(pm_obj *o)
{
    /* In the table's order, so that a MoE model is told it is MoE first. */
    for (size_t i = 0; i < PM_ARRAY_LEN(hf_refused); i++) {
        const hf_key_note *n = &hf_refused[i];
        if (pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, n->key)))
            return pm_obj_fail(o, n->key, PM_ERR_UNSUPPORTED, "%s (the config sets \"%s\")",
                               n->why, n->key);
    }
    return PM_OK;
}

/* After a HuggingFace object is read: a key that was not read is either known not to matter,
 * a likely misspelling of a key that does (an error with "did you mean"), or not recognised;
 * the first and the last are listed as ignored. note, when not NULL, is the reason recorded
 * for every key of the object (a multimodal wrapper's keys). */
pm_status pm_hf_finish(pm_obj *o, const char *note)
{
    for (const cJSON *c = o->json->child; c; c = c->next) {
        bool read = false;
        for (size_t i = 0; i < o->n_known && !read; i++)
            read = strcmp(o->known[i], c->string) == 0;
        if (read)
            continue;
        const hf_key_note *n = find_note(hf_ignored, PM_ARRAY_LEN(hf_ignored), c->string);
        const char *why = note ? note : n ? n->why : NULL;
        /* An override that would be ignored changes nothing: refused, never dropped. */
        if (pm_obj_key_overridden(o, c->string))
            return pm_obj_fail(o, c->string, PM_ERR_UNSUPPORTED,
                               "an override of \"%s\" changes nothing: %s%s", c->string,
                               why ? why : "the key is not recognised",
                               note ? "; set it under text_config (model.text_config.KEY)" : "");
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
const hf_family *pm_hf_family_of(const char *mt)
{
    for (size_t i = 0; mt && i < PM_ARRAY_LEN(hf_families); i++)
        if (strcmp(mt, hf_families[i].name) == 0)
            return hf_families[i].text ? pm_hf_family_of(hf_families[i].text) : &hf_families[i];
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
        if (pm_in_list(family, ft->families, ft->n_families))
            continue;
        for (size_t k = 0; k < ft->n_keys; k++)
            if (pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, ft->keys[k])))
                return pm_obj_fail(o, ft->keys[k], PM_ERR_UNSUPPORTED,
                                   "model_type \"%s\" has no %s (its transformers configuration "
                                   "does not read \"%s\", so the checkpoint is built without "
                                   "it): remove the key, or give the family that builds it",
                                   family, ft->what, ft->keys[k]);
    }
    /* layer_types: full attention, or a window where the family has one (read_window). */
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o->json, "layer_types");
    const bool windows = pm_in_list(family, window_families, PM_ARRAY_LEN(window_families)) ||
                         pm_in_list(family, chunk_families, PM_ARRAY_LEN(chunk_families));
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
pm_status pm_hf_check_family(pm_obj *o, pm_obj *text, bool wrapped)
{
    const char *tmt = wrapped ? pm_json_string(text->json, "model_type") : NULL;
    const char *mt = pm_json_string(o->json, "model_type");
    pm_obj *at = tmt ? text : o;
    const char *family = tmt ? tmt : mt;
    if (!family)
        return pm_obj_fail(o, "model_type", PM_ERR_MISSING,
                           "missing required key \"model_type\" in a HuggingFace config (the "
                           "family decides what the config leaves out: gated MLP, biases, "
                           "parallel blocks); or write the model in the native format "
                           "(docs/data-format.md)");
    const bool wrapper = pm_in_list(family, hf_wrappers, PM_ARRAY_LEN(hf_wrappers));
    if (wrapper && tmt)
        return pm_obj_fail(at, "model_type", PM_ERR_UNSUPPORTED,
                           "text_config names the multimodal wrapper \"%s\" (a wrapper inside "
                           "a wrapper): a wrapper's text_config holds its text model (its "
                           "model_type that model's family, as Gemma-3's gemma3_text), which "
                           "is what this reader models",
                           family);
    if (wrapper ? !tmt && wrapped
                : pm_in_list(family, gated_families, PM_ARRAY_LEN(gated_families)) ||
                      pm_in_list(family, plain_families, PM_ARRAY_LEN(plain_families)) ||
                      pm_in_list(family, act_families, PM_ARRAY_LEN(act_families)))
        return hf_check_features(at, family);
    /* A misspelt family: the nearest one this reader knows (not for names of three letters,
     * which are real families as often as typos: MPT is not a misspelt OPT). */
    const char *near = NULL;
    const char *const *lists[] = {gated_families, plain_families, act_families, hf_wrappers};
    const size_t lens[] = {PM_ARRAY_LEN(gated_families), PM_ARRAY_LEN(plain_families),
                           PM_ARRAY_LEN(act_families), PM_ARRAY_LEN(hf_wrappers)};
    for (size_t i = 0; i < PM_ARRAY_LEN(lists) && !near && strlen(family) > 3; i++)
        near = pm_suggest(family, lists[i], lens[i]);
    char hint[96] = "";
    if (near)
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
    return pm_obj_fail(at, "model_type", PM_ERR_UNSUPPORTED,
                       "the family \"%s\" is not one this model represents%s: its layers may "
                       "not all be attention and MLP blocks (hybrid, linear-attention and "
                       "state-space layers are not modelled); docs/data-format.md lists the "
                       "supported families, and a decoder of attention and MLP blocks can be "
                       "written in the native format",
                       family, hint);
}

/* Families whose attention and MLP run in parallel from one input (one allreduce per layer)
 * without a key that says so; Falcon and GPT-NeoX have keys. */
static const char *const parallel_families[] = {"gptj", "cohere", "cohere2", "phi"};
/* Families with biases on every projection (unless a key says otherwise). */
static const char *const biased_families[] = {"gpt2", "gpt_neox", "opt", "bloom", "phi",
                                              "gpt_bigcode", "starcoder2", "phi3small"};

bool pm_hf_wrapper(const char *family)
{
    return pm_in_list(family, hf_wrappers, PM_ARRAY_LEN(hf_wrappers));
}

bool pm_hf_plain_mlp(const char *family)
{
    return pm_in_list(family, plain_families, PM_ARRAY_LEN(plain_families));
}

bool pm_hf_gated_mlp(const char *family)
{
    return pm_in_list(family, gated_families, PM_ARRAY_LEN(gated_families));
}

bool pm_hf_gated_act(const char *act)
{
    return pm_in_list(act, gated_acts, PM_ARRAY_LEN(gated_acts));
}

bool pm_hf_biased(const char *family)
{
    return pm_in_list(family, biased_families, PM_ARRAY_LEN(biased_families));
}

/* The classes that derive an absent MLP width from the hidden size (transformers 4.57:
 * GPT2Config, GPTJConfig, GPTBigCodeConfig n_inner None -> 4 x n_embd in their blocks;
 * FalconConfig ffn_hidden_size None -> 4 x hidden_size; BloomConfig has no key, its MLP is
 * 4 x hidden_size). Every other class's default is one checkpoint's width (LlamaConfig 11008,
 * MistralConfig 14336, GPTNeoXConfig 24576, OPTConfig's ffn_dim 3072...), which a config that
 * leaves the key out almost never means: the width is required there. */
static const char *const mlp_4h_families[] = {"gpt2", "gptj", "gpt_bigcode", "falcon", "bloom"};

bool pm_hf_mlp_4h(const char *family)
{
    return pm_in_list(family, mlp_4h_families, PM_ARRAY_LEN(mlp_4h_families));
}

bool pm_hf_parallel(const char *family)
{
    return pm_in_list(family, parallel_families, PM_ARRAY_LEN(parallel_families));
}

bool pm_hf_mla(const char *family)
{
    return pm_in_list(family, mla_families, PM_ARRAY_LEN(mla_families));
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
pm_status pm_hf_open_layout(pm_obj *mo, pm_obj *attn, pm_obj *ffn, hf_layout *l)
{
    static const char *const nested[] = {"attn_config", "ffn_config"};
    const char *mt = pm_json_string(mo->json, "model_type");
    l->attn = l->ffn = mo;
    l->dbrx = mt && strcmp(mt, "dbrx") == 0;
    for (size_t i = 0; i < 2 && !l->dbrx; i++)
        if (pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(mo->json, nested[i])))
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
static pm_status quant_groups(pm_obj *q, pm_model *m)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(q->json, "config_groups");
    double bits = 0.0;
    bool is_float = false, first = true;
    for (const cJSON *g = cJSON_IsObject(groups) ? groups->child : NULL; g; g = g->next) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(g, "weights");
        if (!cJSON_IsObject(w))
            continue; /* a group that quantises only activations or the KV cache */
        const cJSON *nb = cJSON_GetObjectItemCaseSensitive(w, "num_bits");
        const char *type = pm_json_string(w, "type");
        const double b = cJSON_IsNumber(nb) ? nb->valuedouble : 0.0;
        /* compressed-tensors' QuantizationArgs.num_bits: an int, 8 by default; what a format
         * stores is at most 32 bits per element. */
        if (cJSON_IsNumber(nb) && !(b >= 1.0 && b <= 32.0 && fmod(b, 1.0) <= 0.0))
            return pm_obj_fail(q, "config_groups", PM_ERR_RANGE,
                               "group \"%s\": weights.num_bits must be a whole number of bits "
                               "in [1, 32] (got %g)",
                               g->string ? g->string : "", b);
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
    return PM_OK;
}

/* The group size and zero point that gptq's, awq's and mlx's configs state (the int4 weights'
 * scales, which the workload's weight_group_size and weight_zero_point model): group_size (-1:
 * gptq's per channel), gptq's sym, awq's zero_point; absent keys are not stated. mlx's affine
 * groups carry a 16-bit bias each, which no zero point here models: not stated. */
static pm_status quant_groups_of(pm_obj *q, const char *method, pm_model *m)
{
    long g = 0;
    bool b = false;
    pm_status st = pm_obj_int(q, "group_size", false, -1, PM_MAX_WEIGHT_GROUP, &g);
    if (st != PM_OK)
        return st;
    m->quant_group_size = (int)g;
    const bool gptq = strcmp(method, "gptq") == 0, awq = strcmp(method, "awq") == 0;
    const char *key = gptq ? "sym" : awq ? "zero_point" : NULL;
    if (key && pm_obj_has(q, key)) {
        if ((st = pm_obj_bool(q, key, true, &b)) != PM_OK)
            return st;
        m->quant_zero_point = (gptq ? !b : b) ? 1 : -1;
    }
    return PM_OK;
}

/* The checkpoint's weight format from a HuggingFace quantization_config (of the config, or of
 * its text_config), or mlx's quantization block: the method (transformers' quant_method; "mlx"
 * for mlx-lm's block, which it also copies into quantization_config without a quant_method) and,
 * where the method or its keys state them, the stored weights' bits and kind. What is modelled
 * stays the workload's weight_dtype; pm_scenario_warning compares the two. */
pm_status pm_hf_read_quantization(pm_obj *o, pm_obj *text, bool wrapped, pm_model *m)
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
        const char *mode = mlx ? pm_json_string(q.json, "mode") : NULL;
        m->quant_float = mode && strstr(mode, "fp") != NULL;
        if ((st = quant_groups_of(&q, method, m)) != PM_OK)
            return st;
    } else if (strcmp(method, "bitsandbytes") == 0) {
        if ((st = pm_obj_bool(&q, "load_in_4bit", false, &b4)) != PM_OK ||
            (st = pm_obj_bool(&q, "load_in_8bit", false, &b8)) != PM_OK)
            return st;
        m->quant_bits = b4 && !b8 ? 4.0 : b8 && !b4 ? 8.0 : 0.0;
    } else if (strcmp(method, "compressed-tensors") == 0) {
        if ((st = quant_groups(&q, m)) != PM_OK)
            return st;
    } else if (strcmp(method, "modelopt") == 0) { /* NVIDIA ModelOpt's quant_algo */
        const char *algo = pm_json_string(q.json, "quant_algo");
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
