/*
 * read_attention.c - the model reader's attention part: heads, KV heads and head width,
 * sliding windows and their layer pattern, chunked local attention, block-sparse layers and
 * multi-head latent attention, from a native file or a HuggingFace config (its family's
 * defaults from hf_family.c).
 *
 * May call: alloc.c, error.c, hf_family.c, json.c, model.c, read_fields.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "read.h"

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
    if ((st = pm_read_note(o, "local_layers", local, "derived", how)) != PM_OK ||
        (st = pm_read_note(o, "global_layers", m->layers - local, "derived", how)) != PM_OK ||
        (st = pm_read_note(o, "window_period", m->window_period, "derived", how)) != PM_OK)
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
    if ((st = pm_read_int(o, "attention_chunk_size", true, 1, PM_MAX_MODEL_DIM, &m->sliding_window)) !=
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
    if (nr && !cJSON_IsNull(nr) && pm_hf_feature_on(nr)) {
        *how = "no_rope_layers: 1 chunked, 0 global";
        return pattern_from_list(o, "no_rope_layers", nr, m);
    }
    int interval = hf && mt && strcmp(mt, "llama4_text") == 0 ? 4 : 0;
    if ((st = pm_read_int(o, "no_rope_layer_interval", false, 1, 64, &interval)) != PM_OK)
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
    if ((st = pm_read_int(o, "blocksparse_block_size", true, 1, PM_MAX_MODEL_DIM,
                          &m->sparse_block)) != PM_OK ||
        (st = pm_read_int(o, "blocksparse_num_local_blocks", true, 1, PM_MAX_MODEL_DIM,
                          &m->sparse_local_blocks)) != PM_OK ||
        (st = pm_read_int(o, "blocksparse_vert_stride", true, 1, PM_MAX_MODEL_DIM,
                          &m->sparse_vert_stride)) != PM_OK ||
        (st = pm_obj_bool(o, "blocksparse_homo_head_pattern", false, &m->sparse_homo_head)) !=
            PM_OK ||
        (st = pm_read_int(o, "dense_attention_every_n_layers", true, 0, PM_MAX_MODEL_DIM, &every)) !=
            PM_OK)
        return st;
    if ((double)m->sparse_block * m->sparse_local_blocks > PM_MAX_MODEL_DIM)
        return pm_obj_fail(o, "blocksparse_num_local_blocks", PM_ERR_RANGE,
                           "the local blocks span more than %d positions (got %d blocks of %d)",
                           PM_MAX_MODEL_DIM, m->sparse_local_blocks, m->sparse_block);
    if (!pm_obj_has(o, "blocksparse_homo_head_pattern") &&
        (st = pm_read_note(o, "blocksparse_homo_head_pattern", 0, "defaulted",
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

/* The layers a sliding window applies to, once the window is known: layer_types, the
 * sliding_window_pattern (or the family's period), Qwen's max_window_layers, or every layer. */
static pm_status window_layers(pm_obj *o, pm_model *m, const hf_family *fam, const cJSON *lt,
                               const char *const *k_pattern)
{
    pm_status st;
    m->window_period = 1;
    m->local_mask = 1;
    const char *how = "every layer";
    const char *pk = NULL;
    if ((st = pm_first_alias(o, k_pattern, 2, &pk)) != PM_OK)
        return st;
    int pattern = 0;
    if (pk && (st = pm_read_int(o, pk, true, 1, 64, &pattern)) != PM_OK)
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

/* Reads the attention window keys: sliding_window, switched off by use_sliding_window false
 * (Qwen2), with the layers it applies to from layer_types, sliding_window_pattern (Gemma-3:
 * every P-th layer global), the family (Gemma-2 alternates, Gemma-3 defaults to 6), or every
 * layer (Mistral, Phi-3). */
pm_status pm_read_window(pm_obj *o, pm_model *m, bool hf, const char *mt)
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
    const hf_family *fam = hf ? pm_hf_family_of(mt) : NULL;
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(o->json, "sliding_window");
    const bool dflt = !sw && fam && fam->window > 0;
    const bool given = (sw && !cJSON_IsNull(sw)) || dflt;
    bool use = given && !(fam && fam->use_window_key);
    if ((st = pm_obj_bool(o, "use_sliding_window", false, &use)) != PM_OK)
        return st;
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(o->json, "blocksparse_block_size");
    if (bs && !cJSON_IsNull(bs)) {
        if ((given && use) || pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(
                                  o->json, "attention_chunk_size")))
            return pm_obj_fail(o, "blocksparse_block_size", PM_ERR_UNSUPPORTED,
                               "block-sparse attention with a sliding window or chunks is not "
                               "modelled (vLLM refuses the pair too)");
        return read_blocksparse(o, m);
    }
    if (pm_obj_has(o, "dense_attention_every_n_layers")) {
        /* Alone it may only say what every model without the blocksparse_* keys is. */
        int every = 1;
        if ((st = pm_read_int(o, "dense_attention_every_n_layers", false, 0, PM_MAX_MODEL_DIM,
                              &every)) != PM_OK)
            return st;
        if (every != 1)
            return pm_obj_fail(o, "dense_attention_every_n_layers", PM_ERR_MISSING,
                               "block-sparse layers (got %d) need blocksparse_block_size, "
                               "blocksparse_num_local_blocks and blocksparse_vert_stride; 1 "
                               "(every layer dense) needs none",
                               every);
    }
    if (pm_hf_feature_on(cJSON_GetObjectItemCaseSensitive(o->json, "attention_chunk_size"))) {
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
        if ((st = pm_hf_refuse_unbuilt(o, k_pattern, PM_ARRAY_LEN(k_pattern),
                                       "sliding-window layers",
                                       !given ? "no sliding_window"
                                              : "use_sliding_window false")) != PM_OK)
            return st;
        if (given && !dflt)
            return pm_read_note(o, "sliding_window", NAN, "ignored",
                                "ignored: use_sliding_window is false");
        return pm_read_note(o, "sliding_window", 0, "defaulted",
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
        if ((st = pm_read_note(o, "sliding_window", m->sliding_window, "defaulted",
                               "model_type: the family's default")) != PM_OK)
            return st;
    } else if ((st = pm_read_int(o, "sliding_window", true, 1, PM_MAX_MODEL_DIM,
                                 &m->sliding_window)) != PM_OK)
        return st;
    return window_layers(o, m, fam, lt, k_pattern);
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
    if (!kl && mt && pm_hf_mla(mt))
        return pm_obj_fail(o, "kv_lora_rank", PM_ERR_MISSING,
                           "model_type \"%s\" builds multi-head latent attention: kv_lora_rank "
                           "is required (transformers' default is not assumed)",
                           mt);
    if (kl && cJSON_IsNull(kl) && mt && pm_hf_mla(mt))
        return pm_obj_fail(o, "kv_lora_rank", PM_ERR_VALUE,
                           "model_type \"%s\" builds multi-head latent attention: kv_lora_rank "
                           "must be a rank (got null; its transformers class has no layer "
                           "without the latent)",
                           mt);
    static const char *const latent[] = {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                         "v_head_dim"};
    if (!kl || cJSON_IsNull(kl))
        return pm_hf_refuse_unbuilt(o, latent, PM_ARRAY_LEN(latent),
                                    "multi-head latent attention", "no kv_lora_rank");
    pm_status st;
    int *out[] = {&m->qk_nope_head_dim, &m->qk_rope_head_dim, &m->v_head_dim};
    if ((st = pm_read_int(o, "kv_lora_rank", true, 1, 1L << 20, &m->kv_lora_rank)) != PM_OK)
        return st;
    const cJSON *ql = cJSON_GetObjectItemCaseSensitive(o->json, "q_lora_rank");
    /* Absent, the classes' default (DeepseekV2Config, DeepseekV3Config: 1536) is DeepSeek-V3's;
     * null is a full-rank query projection (DeepSeek-V2-Lite). */
    if (!ql && mt && pm_hf_mla(mt))
        return pm_obj_fail(o, "q_lora_rank", PM_ERR_MISSING,
                           "model_type \"%s\": q_lora_rank is required (null: a full-rank query "
                           "projection; the class's default, 1536, is DeepSeek-V3's)",
                           mt);
    if (ql && !cJSON_IsNull(ql) &&
        (st = pm_read_int(o, "q_lora_rank", true, 1, 1L << 20, &m->q_lora_rank)) != PM_OK)
        return st;
    if ((!ql || cJSON_IsNull(ql)) &&
        (st = pm_read_note(o, "q_lora_rank", 0, "defaulted",
                           "a full-rank query projection")) != PM_OK)
        return st;
    for (size_t i = 0; i < PM_ARRAY_LEN(dims); i++) {
        /* qk_rope_head_dim may be 0 (no position part); the others carry the heads. */
        if ((st = pm_read_int(o, dims[i], true, i == 1 ? 0 : 1, 1L << 20, out[i])) != PM_OK)
            return st;
    }
    return pm_read_note(o, "kv_bytes_per_position_elements",
                        m->kv_lora_rank + m->qk_rope_head_dim, "derived",
                        "MLA: kv_lora_rank + qk_rope_head_dim per layer, replicated on every "
                        "tensor-parallel rank");
}

/* keys (the first n in a HuggingFace file, the first alone in a native one), or DBRX's key. */
pm_status pm_read_int_names(pm_obj *o, const hf_layout *l, const char *const *keys, size_t n,
                            const char *dbrx_key, bool required, int *out)
{
    if (l->dbrx)
        return pm_read_int_alias(o, &dbrx_key, 1, required, out);
    return pm_read_int_alias(o, keys, n, required, out);
}

/* The KV heads: the key of the family, multi_query (one KV head: Falcon, GPT-BigCode), or
 * multi-head attention. Falcon's num_kv_heads counts only with new_decoder_architecture.
 * *kv_key_out is the key that gave them (NULL: derived), *new_arch Falcon's flag. */
pm_status pm_read_kv_heads(pm_obj *o, const hf_layout *l, pm_model *m, bool hf,
                           const char *mt, bool *new_arch, const char **kv_key_out)
{
    pm_status st;
    static const char *const k_kv[] = {"num_key_value_heads", "num_kv_heads", "n_head_kv"};
    m->kv_heads = m->heads;
    bool mqa = false;
    *new_arch = false;
    if (hf) {
        /* FalconConfig and GPTBigCodeConfig default multi_query to true (transformers main
         * @008e574): a config without the key has one KV head. */
        const bool mq_family = mt && (strcmp(mt, "falcon") == 0 || strcmp(mt, "gpt_bigcode") == 0);
        const bool mq_given = pm_obj_has(o, "multi_query");
        mqa = mq_family;
        if ((st = pm_obj_bool(o, "multi_query", false, &mqa)) != PM_OK ||
            (st = pm_obj_bool(o, "new_decoder_architecture", false, new_arch)) != PM_OK)
            return st;
        if (mq_family && !mq_given &&
            (st = pm_read_note(o, "multi_query", 1, "defaulted",
                               "model_type: the family's default (true)")) != PM_OK)
            return st;
    }
    /* DBRX's kv_n_heads is required: transformers' DbrxAttentionConfig defaults it to 1. */
    static const char *const dbrx_kv[] = {"kv_n_heads"};
    const char *kv_key = l->dbrx ? pm_first_present(l->attn, dbrx_kv, 1)
                                 : pm_first_present(o, k_kv, hf ? 3 : 1);
    if ((st = pm_read_int_names(l->attn, l, k_kv, hf ? 3 : 1, "kv_n_heads", l->dbrx, &m->kv_heads)) !=
        PM_OK)
        return st;
    if (hf && mt && strcmp(mt, "falcon") == 0 && !*new_arch) {
        m->kv_heads = mqa ? 1 : m->heads;
        if (kv_key && (st = pm_read_note(o, kv_key, NAN, "ignored",
                                         "ignored: Falcon reads it only with "
                                         "new_decoder_architecture")) != PM_OK)
            return st;
        kv_key = NULL;
    } else if (mqa && !kv_key) {
        m->kv_heads = 1;
    }
    if (!kv_key && (st = pm_read_note(o, "num_key_value_heads", m->kv_heads,
                                      mqa ? "derived" : "defaulted",
                                      mqa ? "multi_query: one KV head"
                                        : "= num_attention_heads (multi-head attention)")) !=
                       PM_OK)
        return st;
    *kv_key_out = kv_key;
    return PM_OK;
}

/* The head dim: MLA's query/key head, the file's head_dim, or hidden / heads. */
pm_status pm_read_head_dim(pm_obj *o, pm_model *m, const char *mt)
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
        (st = pm_read_int(o, "head_dim", true, 1, PM_MAX_MODEL_DIM, &m->head_dim)) != PM_OK)
        return st;
    if (!has_head_dim && mla &&
        (st = pm_read_note(o, "head_dim", m->head_dim, "derived",
                           "MLA: qk_nope_head_dim + qk_rope_head_dim (the query/key head)")) !=
            PM_OK)
        return st;
    if (mla)
        has_head_dim = true;
    /* Classes with a head_dim default of their own (transformers 4.57: GemmaConfig,
     * Gemma2Config, Gemma3TextConfig 256; Qwen3Config, Qwen3MoeConfig, Glm4MoeConfig,
     * Llama4TextConfig 128; GptOssConfig 64), which their models read as given (None breaks
     * them): not hidden_size / num_attention_heads (Gemma-2-9B's 3584 / 16 = 224 against its 256). */
    static const char *const own_head_dim[] = {"gemma",      "gemma2",   "gemma3_text",
                                               "qwen3",      "qwen3_moe", "glm4_moe",
                                               "llama4_text", "gpt_oss"};
    if (!has_head_dim && mt && pm_in_list(mt, own_head_dim, PM_ARRAY_LEN(own_head_dim)))
        return pm_obj_fail(o, "head_dim", PM_ERR_MISSING,
                           "model_type \"%s\": head_dim is required (its configuration class "
                           "has a default of its own, which is not hidden_size / "
                           "num_attention_heads, and a null breaks its model)",
                           mt);
    if (!has_head_dim && m->hidden % m->heads != 0)
        return pm_fail(o->err, PM_ERR_INCONSISTENT, o->file, "$.head_dim",
                       "hidden_size %d is not a multiple of num_attention_heads %d: give "
                       "\"head_dim\" explicitly",
                       m->hidden, m->heads);
    if (!has_head_dim &&
        (st = pm_read_note(o, "head_dim", m->head_dim, "derived",
                           "hidden_size / num_attention_heads")) != PM_OK)
        return st;
    return PM_OK;
}
