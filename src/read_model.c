/*
 * read_model.c - pm_model_read: a model from a native file or a HuggingFace config.json into
 * pm_model: the MoE layers, the MLP's shape and gate, tied embeddings, biases, parallel blocks
 * and the name; the attention part is read_attention.c's, the family rules hf_family.c's.
 * Every number goes through the strict object reader, so every error names the file, the JSON
 * path, the expectation and the value.
 *
 * May call: error.c, hf_family.c, json.c, model.c, read_attention.c, read_fields.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "read.h"

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
    const char *step_key = NULL;
    if ((st = pm_first_alias(o, k_step, 2, &step_key)) != PM_OK)
        return st;
    if ((st = pm_read_int(o, "first_k_dense_replace", false, 0, PM_MAX_LAYERS, &first)) != PM_OK ||
        (st = pm_read_int(o, "moe_layer_freq", false, 1, 64, &freq)) != PM_OK)
        return st;
    for (size_t i = 0; i < 2; i++)
        pm_obj_declare(o, k_step[i], PM_DIM_NONE);
    if (step_key && (st = pm_read_int(o, step_key, true, 1, 64, &step)) != PM_OK)
        return st;
    if (freq > 0 && step > 0)
        return pm_obj_fail(o, step_key, PM_ERR_INCONSISTENT,
                           "moe_layer_freq and %s both set the MoE layers: give one", step_key);
    m->moe_first_layer = first;
    m->moe_period = freq > 0 ? freq : step > 0 ? step : 1;
    m->moe_phase = step > 0 ? step - 1 : 0;
    if (pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, "mlp_only_layers")))
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
    return pm_read_note(o, "moe_layers_count", pm_model_moe_layers(m), "derived",
                        "layers with a MoE block (first_k_dense_replace and the period)");
}

/* The MoE keys whose absence has no faithful reading: where a family's class reads a key of
 * its own for the experts' width or the shared experts, its default is one checkpoint's
 * (transformers 4.57: Qwen2MoeConfig moe_intermediate_size 1408 and
 * shared_expert_intermediate_size 5632, Qwen3MoeConfig 768, DeepseekV3Config 2048 and
 * n_shared_experts 1, Glm4MoeConfig 1408 and 1) or differs between transformers and the
 * remote code (DeepSeek's None: no shared expert); the width is not intermediate_size there,
 * as it is in Mixtral, OLMoE, Granite-MoE, PhiMoE, gpt-oss and Llama-4. Required. */
static pm_status require_moe_keys(pm_obj *o, const char *mt)
{
    static const char *const own_width[] = {"qwen2_moe", "qwen3_moe", "deepseek_v2",
                                            "deepseek_v3", "deepseek", "glm4_moe"};
    static const char *const shared_count[] = {"deepseek_v2", "deepseek_v3", "deepseek",
                                               "glm4_moe"};
    static const char *const shared_width[] = {"qwen2_moe"};
    static const struct {
        const char *const *families;
        size_t n;
        const char *key, *what;
    } rules[] = {
        {own_width, PM_ARRAY_LEN(own_width), "moe_intermediate_size", "each expert's width"},
        {shared_count, PM_ARRAY_LEN(shared_count), "n_shared_experts", "the shared experts"},
        {shared_width, PM_ARRAY_LEN(shared_width), "shared_expert_intermediate_size",
         "the shared expert's width"},
    };
    for (size_t i = 0; mt && i < PM_ARRAY_LEN(rules); i++)
        if (pm_in_list(mt, rules[i].families, rules[i].n) && !pm_obj_has(o, rules[i].key))
            return pm_obj_fail(o, rules[i].key, PM_ERR_MISSING,
                               "model_type \"%s\": \"%s\" (%s) is required (its "
                               "configuration class's default is one checkpoint's, not this "
                               "model's)",
                               mt, rules[i].key, rules[i].what);
    return PM_OK;
}

/* The shared experts: DeepSeek's n_shared_experts of moe_intermediate_size, Qwen2's one of
 * shared_expert_intermediate_size, Llama-4's one of intermediate_size (expert_width). */
static pm_status read_shared_experts(pm_obj *o, pm_model *m, const char *mt, int expert_width)
{
    pm_status st;
    const bool llama4 = mt && strcmp(mt, "llama4_text") == 0;
    if ((st = pm_read_int(o, "n_shared_experts", false, 0, 64, &m->shared_experts)) != PM_OK)
        return st;
    m->shared_intermediate = m->shared_experts > 0 ? m->expert_intermediate : 0;
    if (pm_obj_has(o, "shared_expert_intermediate_size") &&
        pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, "shared_expert_intermediate_size"))) {
        if ((st = pm_read_int(o, "shared_expert_intermediate_size", true, 1, PM_MAX_MODEL_DIM,
                              &m->shared_intermediate)) != PM_OK)
            return st;
        if (m->shared_experts == 0)
            m->shared_experts = 1;
    }
    if (llama4 && m->shared_experts == 0) {
        /* Llama4TextMoe always has one shared expert of intermediate_size. */
        m->shared_experts = 1;
        m->shared_intermediate = expert_width;
        if ((st = pm_read_note(o, "n_shared_experts", 1, "derived",
                               "model_type llama4_text: one shared expert of "
                               "intermediate_size")) != PM_OK)
            return st;
    }
    return PM_OK;
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
    const char *ek = "moe_num_experts";
    if (!dbrx && (st = pm_first_alias(o, k_experts, 3, &ek)) != PM_OK)
        return st;
    const cJSON *ev = ek ? cJSON_GetObjectItemCaseSensitive(o->json, ek) : NULL;
    for (size_t i = 0; i < 3 && !dbrx; i++)
        pm_obj_declare(o, k_experts[i], PM_DIM_NONE);
    /* A family that always builds experts: transformers would take its default count, a
     * guess this reader does not make (nor model the layers dense). */
    static const char *const always_moe[] = {"mixtral", "qwen2_moe", "qwen3_moe",
                                             "olmoe", "granitemoe", "phimoe",
                                             "glm4_moe", "gpt_oss", "llama4_text"};
    if (!dbrx && !ek && mt && pm_in_list(mt, always_moe, PM_ARRAY_LEN(always_moe)))
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
    if (!dbrx && !any_count && mt && pm_in_list(mt, count_ambiguous, PM_ARRAY_LEN(count_ambiguous)))
        return pm_obj_fail(o, "n_routed_experts", PM_ERR_MISSING,
                           "model_type \"%s\": the routed expert count is required: without it "
                           "transformers' class builds %s routed experts per layer and DeepSeek's "
                           "remote code dense layers (null: dense layers)",
                           mt, strcmp(mt, "deepseek_v2") == 0 ? "64" : "256");
    /* A family that builds experts (or whose null means dense layers) has no count of 0. */
    if (!dbrx && ek && !pm_hf_feature_on(ev) && mt &&
        (pm_in_list(mt, always_moe, PM_ARRAY_LEN(always_moe)) ||
         pm_in_list(mt, count_ambiguous, PM_ARRAY_LEN(count_ambiguous))))
        return pm_obj_fail(o, ek, PM_ERR_VALUE,
                           "model_type \"%s\" builds mixture-of-experts layers: the expert count "
                           "must be at least 1 (got %s)%s",
                           mt, cJSON_IsNumber(ev) ? "0" : cJSON_IsFalse(ev) ? "false"
                                                                             : "an empty list",
                           pm_in_list(mt, count_ambiguous, PM_ARRAY_LEN(count_ambiguous))
                               ? "; null stands for dense layers"
                               : "");
    if (!dbrx && (!ek || !pm_hf_feature_on(ev))) {
        /* dense: "num_experts": 0 or null in a family without experts; what sets the experts'
         * shape describes experts it does not have */
        const char *const top[] = {top_k};
        pm_status r = pm_hf_refuse_unbuilt(o, top, 1, "routed experts", "no expert count");
        return r != PM_OK ? r
                          : pm_hf_refuse_unbuilt(o, keys, PM_ARRAY_LEN(keys),
                                                 "mixture-of-experts layers", "no expert count");
    }
    if ((st = require_moe_keys(o, mt)) != PM_OK)
        return st;
    const int expert_width = m->intermediate;
    if ((st = pm_read_int(o, ek, true, 1, PM_MAX_EXPERTS, &m->experts)) != PM_OK ||
        (st = pm_read_int(o, top_k, true, 1, m->experts, &m->experts_per_token)) != PM_OK)
        return st;
    m->expert_intermediate = expert_width;
    const bool has_moe_width = pm_obj_has(o, "moe_intermediate_size");
    if ((st = pm_read_int(o, "moe_intermediate_size", false, 1, PM_MAX_MODEL_DIM,
                          &m->expert_intermediate)) != PM_OK)
        return st;
    if (!has_moe_width &&
        (st = pm_read_note(o, "moe_intermediate_size", m->expert_intermediate, "derived",
                           dbrx ? "ffn_hidden_size: each expert's width"
                              : "intermediate_size: each expert is as wide as the config's MLP")) !=
            PM_OK)
        return st;
    if ((st = read_shared_experts(o, m, mt, expert_width)) != PM_OK)
        return st;
    if ((st = pm_read_int(o, "intermediate_size_mlp", false, 1, PM_MAX_MODEL_DIM,
                          &m->intermediate)) != PM_OK)
        return st;
    if (m->parallel_block)
        return pm_obj_fail(o, ek, PM_ERR_UNSUPPORTED,
                           "experts with parallel attention and MLP blocks are not modelled");
    return read_moe_pattern(o, m);
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
    const bool has_inter = pm_first_present(l->ffn, k_inter, hf ? 5 : 1) != NULL || l->dbrx;
    const char *mt = hf ? pm_json_string(o->json, "model_type") : NULL;
    if (!has_inter && mt && strcmp(mt, "phi3small") == 0)
        return pm_obj_fail(o, "ff_intermediate_size", PM_ERR_MISSING,
                           "model_type phi3small: the MLP width is required (Phi3SmallConfig "
                           "derives it from ff_dim_multiplier and gegelu_pad_to_256 otherwise, "
                           "which this reader does not)");
    /* A misspelt width is the misspelling's error, as pm_hf_finish would say it. */
    for (const cJSON *c = !has_inter && hf ? l->ffn->json->child : NULL; c; c = c->next) {
        const char *near = pm_suggest(c->string, k_inter, 5);
        if (near && strcmp(near, c->string) != 0)
            return pm_obj_fail(l->ffn, c->string, PM_ERR_UNKNOWN_KEY,
                               "unknown key \"%s\" (did you mean \"%s\"?)", c->string, near);
    }
    if (!has_inter && hf && !pm_hf_mlp_4h(l->family))
        return pm_obj_fail(o, "intermediate_size", PM_ERR_MISSING,
                           "model_type %s: the MLP width is required (its configuration "
                           "class's default is one checkpoint's width, not 4 x hidden_size; "
                           "only GPT-2, GPT-J, GPT-BigCode, Falcon and BLOOM derive it)",
                           l->family ? l->family : "(none)");
    if (!has_inter && four_h > PM_MAX_MODEL_DIM)
        return pm_obj_fail(o, "intermediate_size", PM_ERR_RANGE,
                           "the default 4 x hidden_size = %lld exceeds %d: give "
                           "\"intermediate_size\" explicitly",
                           (long long)four_h, PM_MAX_MODEL_DIM);
    if ((st = pm_read_int_names(l->ffn, l, k_inter, hf ? 5 : 1, "ffn_hidden_size", !hf || l->dbrx,
                                &m->intermediate)) != PM_OK)
        return st;
    if (!has_inter && (st = pm_read_note(o, "intermediate_size", m->intermediate, "defaulted",
                                         "4 x hidden_size")) != PM_OK)
        return st;
    /* Required, except where the family's class has a default a published config relies on
     * (Gemma-3's text_config leaves out its 262208). */
    const hf_family *fam = hf ? pm_hf_family_of(l->family) : NULL;
    const bool vocab_dflt = fam && fam->vocab > 0 && !pm_obj_has(o, "vocab_size");
    if (vocab_dflt) {
        m->vocab = fam->vocab;
        if ((st = pm_read_note(o, "vocab_size", m->vocab, "defaulted",
                               "model_type: the family's default")) != PM_OK)
            return st;
    } else if ((st = pm_read_int(o, "vocab_size", true, 1, PM_MAX_MODEL_DIM, &m->vocab)) != PM_OK)
        return st;
    if ((st = pm_read_int_names(o, l, k_pos, hf ? 2 : 1, "max_seq_len", false,
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
        if ((st = pm_read_note(o, "learned_positions", m->learned_positions, "derived",
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
        if (pm_hf_plain_mlp(mt)) {
            m->gated_mlp = false;
            gated_why = "model_type: this family's MLP has two plain matrices";
        } else if (pm_hf_gated_mlp(mt)) {
            gated_why = "model_type: this family's MLP is gated";
        } else if (act) {
            m->gated_mlp = pm_hf_gated_act(act);
            gated_why = m->gated_mlp ? "the activation is SiLU: gated (SwiGLU)"
                                     : "the activation is not SiLU: two plain matrices";
        }
    }
    const bool has_gated = pm_obj_has(o, "mlp_gated");
    /* Absent: the family's default (its configuration class's), untied in a native file. */
    const hf_family *fam = hf ? pm_hf_family_of(mt) : NULL;
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
    if (!has_gated && (st = pm_read_note(o, "mlp_gated", m->gated_mlp, hf ? "derived" : "defaulted",
                                         gated_why)) != PM_OK)
        return st;
    if (!has_tied && (st = pm_read_note(o, "tie_word_embeddings", m->tied_embeddings, "defaulted",
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
    bool fam_bias = hf && pm_hf_biased(mt);
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
    /* InternLM2's "bias" is wqkv's and wo's only: its MLP (w1, w2, w3) has none. Its remote
     * code's default (InternLM2Config bias=True) is no transformers class's: required, as its
     * tie_word_embeddings is. */
    if (mt && strcmp(mt, "internlm2") == 0) {
        if (!all_key)
            return pm_obj_fail(o, "bias", PM_ERR_MISSING,
                               "model_type \"internlm2\" (remote code): \"bias\" (wqkv's and "
                               "wo's) is required");
        mlp_bias = false;
    }
    if (mt && strcmp(mt, "phi3small") == 0 && pm_obj_has(o, "attention_bias")) {
        /* Phi-3-small's query_key_value and dense are nn.Linear with the default bias whatever
         * attention_bias says (HF modeling_phi3_small.py; vLLM builds them with bias=True). */
        pm_obj_declare(o, "attention_bias", PM_DIM_NONE);
        if ((st = pm_read_note(o, "attention_bias", NAN, "ignored",
                               "ignored: model_type phi3small builds its attention projections "
                               "with biases whatever it says")) != PM_OK ||
            (st = pm_read_note(o, "qkv_bias", 1, "derived", "the family's default")) != PM_OK)
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
    bool par = hf && pm_hf_parallel(mt);
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
    if (!pm_first_present(o, k_par, 2) &&
        ((st = pm_read_note(o, "parallel_attn", par, hf ? "derived" : "defaulted",
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
         (st = pm_read_note(o, "qkv_bias", m->qkv_bias, hf ? "derived" : "defaulted",
                            all_key ? all_key : bias_why)) != PM_OK) ||
        (!pm_obj_has(o, "attention_bias") &&
         (st = pm_read_note(o, "attention_bias", m->o_bias, hf ? "derived" : "defaulted",
                            all_key ? all_key : bias_why)) != PM_OK) ||
        (!pm_obj_has(o, "mlp_bias") &&
         (st = pm_read_note(o, "mlp_bias", m->mlp_bias, hf ? "derived" : "defaulted",
                            all_key ? all_key : bias_why)) != PM_OK))
        return st;
    /* A family whose attention_bias leaves O without one (GLM-4.5). */
    if (pm_obj_has(o, "attention_bias") && m->qkv_bias && !m->o_bias &&
        (st = pm_read_note(o, "o_bias", 0, "derived",
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
    if ((st = pm_read_int_names(o, l, k_layers, n_alias, "n_layers", true, &m->layers)) != PM_OK ||
        (st = pm_read_int_alias(o, k_hidden, n_alias, true, &m->hidden)) != PM_OK ||
        (st = pm_read_int_names(o, l, k_heads, hf ? 2 : 1, "n_heads", true, &m->heads)) != PM_OK)
        return st;
    const char *mt = hf ? l->family : NULL;

    bool new_arch = false;
    const char *kv_key = NULL, *all_key = NULL;
    if ((st = pm_read_kv_heads(o, l, m, hf, mt, &new_arch, &kv_key)) != PM_OK ||
        (st = pm_read_head_dim(o, m, mt)) != PM_OK || (st = read_mlp_shape(o, l, m, hf)) != PM_OK ||
        (st = read_gate_and_tie(o, m, hf, mt)) != PM_OK ||
        (st = read_biases(o, m, hf, mt, &all_key)) != PM_OK ||
        (st = read_parallel(o, m, hf, mt, new_arch)) != PM_OK ||
        (st = note_biases(o, m, hf, all_key)) != PM_OK)
        return st;
    if ((st = pm_read_window(o, m, hf, mt)) != PM_OK ||
        (st = read_moe(l->ffn, m, mt, l->dbrx)) != PM_OK ||
        (st = pm_read_int(o, "num_nextn_predict_layers", false, 0, 64, &m->mtp_layers)) != PM_OK)
        return st;

    if (m->heads % m->kv_heads != 0)
        return pm_obj_fail(l->attn, kv_key ? kv_key : "num_key_value_heads", PM_ERR_INCONSISTENT,
                           "must divide num_attention_heads (got %d KV heads, %d attention heads)",
                           m->kv_heads, m->heads);
    return PM_OK;
}

/* A HuggingFace file's own name: the directory of a ".../NAME/config.json", else the file's
 * name without ".json" ("llama3-8b-config"); into buf, empty when the config is not a file
 * (an inline object of an override) or the name does not fit buf (never cut). */
static void file_stem(const char *file, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!file || !file[0] || pm_file_is_override(file))
        return;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *start = base;
    size_t len = strlen(base);
    if (strcmp(base, "config.json") == 0) { /* the directory above it */
        if (base < file + 2)
            return;
        const char *end = base - 1;
        for (start = end; start > file && start[-1] != '/'; start--)
            ;
        len = (size_t)(end - start);
        if (len == 0 || (len == 1 && start[0] == '.'))
            return;
    } else if (len > 5 && strcmp(base + len - 5, ".json") == 0) {
        len -= 5;
    }
    if (len < n) {
        memcpy(buf, start, len);
        buf[len] = '\0';
    }
}

/* The model's name: its "name"; in a HuggingFace file without one, the checkpoint's
 * (_name_or_path: the last part of a path that does not fit, "meta-llama/Llama-3.1-8B" stays
 * whole), else the file's own name (file_stem: a family name such as "llama" says nothing of
 * which checkpoint it is), else its model_type. A name that does not fit is refused, never
 * cut. */
static pm_status hf_model_name(pm_obj *o, bool hf, bool kind_given, pm_model *m)
{
    pm_strlcpy(m->name, "model", sizeof m->name);
    if (!pm_obj_has(o, "name") && hf) {
        const char *key = "_name_or_path", *name = pm_json_string(o->json, key);
        char stem[sizeof m->name];
        file_stem(o->file, stem, sizeof stem);
        if ((!name || !name[0]) && stem[0]) {
            pm_strlcpy(m->name, stem, sizeof m->name);
            return PM_OK;
        }
        if (!name || !name[0])
            name = pm_json_string(o->json, key = "model_type");
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
    /* Only a wrapper's class reads text_config: in another family it is not the model. */
    const char *outer = pm_json_string(o->json, "model_type");
    if (wrapped && outer && !pm_hf_wrapper(outer))
        return pm_obj_fail(o, "text_config", PM_ERR_UNSUPPORTED,
                           "model_type \"%s\" is not a multimodal wrapper: its configuration "
                           "class does not read text_config, so the model is the top level's "
                           "keys; remove text_config, or give the wrapper's model_type",
                           outer);
    pm_obj *mo = o;
    if (wrapped) {
        text.lenient = true;
        mo = &text;
    }
    pm_obj attn, ffn;
    hf_layout l;
    if ((st = pm_hf_refuse(o)) != PM_OK || (wrapped && (st = pm_hf_refuse(mo)) != PM_OK) ||
        (st = pm_hf_check_family(o, &text, wrapped)) != PM_OK ||
        (st = pm_hf_check_aliases(mo)) != PM_OK ||
        (st = pm_hf_open_layout(mo, &attn, &ffn, &l)) != PM_OK)
        return st;
    /* A wrapper whose text_config names no family: the wrapper's text family. */
    l.family = pm_json_string(mo->json, "model_type");
    if (!l.family && wrapped) {
        const char *wmt = pm_json_string(o->json, "model_type");
        const hf_family *tf = pm_hf_family_of(wmt);
        l.family = tf ? tf->name : wmt;
    }
    if ((st = read_model_fields(mo, &l, m, true)) != PM_OK ||
        (st = pm_hf_read_quantization(o, &text, wrapped, m)) != PM_OK)
        return st;
    if (l.dbrx && ((st = pm_hf_finish(&attn, NULL)) != PM_OK || (st = pm_hf_finish(&ffn, NULL)) != PM_OK))
        return st;
    if (wrapped && (st = pm_hf_finish(mo, NULL)) != PM_OK)
        return st;
    return pm_hf_finish(o, wrapped ? "a multimodal wrapper's key: only the text model "
                                  "(text_config) is modelled, the vision tower is not"
                                : NULL);
}
