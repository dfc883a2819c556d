/*
 * read.h - private to the readers (read_fields.c, hf_family.c, read_attention.c, read_model.c,
 * read_components.c, read_runtime.c): the field rules they share and the HuggingFace family
 * rules the model reader asks. The physics below never includes it: a reader fills the public
 * structs, and everything else reads those.
 */
#ifndef PM_READ_H
#define PM_READ_H

#include <math.h>

#include "internal.h"

static const pm_range POSITIVE = {0.0, INFINITY, true, false};
static const pm_range NONNEGATIVE = {0.0, INFINITY, false, false};

/* Where a HuggingFace config keeps its keys: all in the model object, or (DBRX) the KV heads
 * under attn_config and the MLP and its experts under ffn_config, some under DBRX's own names
 * (n_layers, n_heads, max_seq_len, kv_n_heads, ffn_hidden_size, moe_num_experts, moe_top_k),
 * read only for model_type dbrx: another family's n_layers may count otherwise. */
/* Where a HuggingFace config keeps its keys: all in the model object, or (DBRX) the KV heads
 * under attn_config and the MLP and its experts under ffn_config, some under DBRX's own names
 * (n_layers, n_heads, max_seq_len, kv_n_heads, ffn_hidden_size, moe_num_experts, moe_top_k),
 * read only for model_type dbrx: another family's n_layers may count otherwise. */
typedef struct hf_layout {
    pm_obj *attn, *ffn;
    bool dbrx;
    const char *family; /* the text model's model_type (a wrapper's text family), or NULL */
} hf_layout;

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

/* ---- read_fields.c ---- */
/* pm_obj_quantity, then the magnitude check, failing at the key the value was written under
 * and in its unit, so that "5e-324 GBps" is answered in GBps. The written value is checked too:
 * 5e-324 us is 0 s once converted, but nobody writes a zero that way. */
pm_status pm_read_quantity(pm_obj *o, const char *base, pm_dimension dim, bool required,
                           pm_range r, double *out);
pm_status pm_read_int(pm_obj *o, const char *key, bool required, long lo, long hi, int *out);
/* HuggingFace spells some fields differently per family: try the aliases in order. */
pm_status pm_read_int_alias(pm_obj *o, const char *const *keys, size_t n, bool required, int *out);
bool pm_in_list(const char *s, const char *const *list, size_t n);
const char *pm_json_string(const cJSON *obj, const char *key);
/* Records a value the model uses that the file did not give. */
pm_status pm_read_note(pm_obj *o, const char *key, double v, const char *origin,
                       const char *why);
/* An optional quantity: read into *out when the file gives it (under any unit), else *out is
 * left as it is (0: the fallback the struct documents) and the value that stands in for it,
 * dflt in unit_si, is recorded as defaulted under key (the documented spelling) with why. */
pm_status pm_read_optional_quantity(pm_obj *o, const char *base, pm_dimension dim, pm_range r,
                                    double *out, const char *key, double dflt,
                                    const char *unit_si, const char *why);
/* The first of keys present (not null) in o into *first (NULL: none), once every other present
 * one agrees with it: the aliases of one setting must agree, in every family; else fails at the
 * second (PM_ERR_INCONSISTENT). */
pm_status pm_first_alias(pm_obj *o, const char *const *keys, size_t n, const char **first);
/* The first of keys present (not null) in o, or NULL. */
const char *pm_first_present(const pm_obj *o, const char *const *keys, size_t n);

/* ---- hf_family.c ---- */
/* Whether a HuggingFace key is given with a value that turns its feature on: not null, false,
 * 0 or an empty list (configs of dense models write "num_experts": null, say). */
bool pm_hf_feature_on(const cJSON *it);
/* Refuses the first of keys turned on (pm_hf_feature_on) in a model that does not build their
 * feature `what` (`why`: what it lacks): nothing reads them, so the model asked for is not the
 * one modelled (a what-if's --set model.n_shared_experts=1 on a dense model, say). */
pm_status pm_hf_refuse_unbuilt(pm_obj *o, const char *const *keys, size_t n, const char *what,
                               const char *why);
pm_status pm_hf_check_aliases(pm_obj *o);
/* Refuses the unsupported keys of a HuggingFace object (the model, or its text_config). */
pm_status pm_hf_refuse(pm_obj *o);
/* After a HuggingFace object is read: a key that was not read is either known not to matter,
 * a likely misspelling of a key that does (an error with "did you mean"), or not recognised;
 * the first and the last are listed as ignored. note, when not NULL, is the reason recorded
 * for every key of the object (a multimodal wrapper's keys). */
pm_status pm_hf_finish(pm_obj *o, const char *note);
/* The family's defaults (a wrapper's: its text family's), or NULL (a native file). */
const hf_family *pm_hf_family_of(const char *mt);
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
pm_status pm_hf_check_family(pm_obj *o, pm_obj *text, bool wrapped);
/* The layout of the HuggingFace model object mo: DBRX's nested attn_config and ffn_config
 * opened into attn and ffn (required), or mo itself for every other family, which may not
 * have them (MPT's attn_config and ffn_config are another layout, not modelled). */
pm_status pm_hf_open_layout(pm_obj *mo, pm_obj *attn, pm_obj *ffn, hf_layout *l);
/* The checkpoint's weight format from a HuggingFace quantization_config (of the config, or of
 * its text_config), or mlx's quantization block: the method (transformers' quant_method; "mlx"
 * for mlx-lm's block, which it also copies into quantization_config without a quant_method) and,
 * where the method or its keys state them, the stored weights' bits and kind. What is modelled
 * stays the workload's weight_dtype; pm_scenario_warning compares the two. */
pm_status pm_hf_read_quantization(pm_obj *o, pm_obj *text, bool wrapped, pm_model *m);

/* ---- read_attention.c ---- */
/* Reads the attention window keys: sliding_window, switched off by use_sliding_window false
 * (Qwen2), with the layers it applies to from layer_types, sliding_window_pattern (Gemma-3:
 * every P-th layer global), the family (Gemma-2 alternates, Gemma-3 defaults to 6), or every
 * layer (Mistral, Phi-3). */
pm_status pm_read_window(pm_obj *o, pm_model *m, bool hf, const char *mt);
/* keys (the first n in a HuggingFace file, the first alone in a native one), or DBRX's key. */
pm_status pm_read_int_names(pm_obj *o, const hf_layout *l, const char *const *keys, size_t n,
                            const char *dbrx_key, bool required, int *out);
/* The KV heads: the key of the family, multi_query (one KV head: Falcon, GPT-BigCode), or
 * multi-head attention. Falcon's num_kv_heads counts only with new_decoder_architecture.
 * *kv_key_out is the key that gave them (NULL: derived), *new_arch Falcon's flag. */
pm_status pm_read_kv_heads(pm_obj *o, const hf_layout *l, pm_model *m, bool hf,
                           const char *mt, bool *new_arch, const char **kv_key_out);
/* The head dim: MLA's query/key head, the file's head_dim, or hidden / heads. */
pm_status pm_read_head_dim(pm_obj *o, pm_model *m, const char *mt);

/* Traits of a HuggingFace family (hf_family.c): a multimodal wrapper, a plain two-matrix MLP, a gated one, an
 * activation that gates, biases on every projection, attention and MLP in parallel without a
 * key, multi-head latent attention. False for NULL. */
bool pm_hf_wrapper(const char *family); /* a multimodal wrapper: its text model in text_config */
bool pm_hf_plain_mlp(const char *family);
bool pm_hf_gated_mlp(const char *family);
bool pm_hf_gated_act(const char *act);
bool pm_hf_biased(const char *family);
bool pm_hf_parallel(const char *family);
/* Whether the family's class derives an absent MLP width as 4 x hidden_size (GPT-2's n_inner,
 * Falcon's ffn_hidden_size...); in every other family it is required. */
bool pm_hf_mlp_4h(const char *family);
bool pm_hf_mla(const char *family);

#endif
