/*
 * options.c - what the command line accepts, in one place (options.h): the table of options
 * that getopt_long, the GIVEN_* checks of main.c and every help text are made from, the table of
 * commands with the options and formats each uses, and the suggestions for mistyped names.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "output.h"

/* The overrides share one bit: a command that reads a scenario takes them all. */
const cli_option cli_options[] = {
    {"config", required_argument, 'c', GIVEN_CONFIG, "REF",
     "scenario name or path (default: llama70b)"},
    {"set", required_argument, 's', GIVEN_SET, "PATH=VALUE",
     "override any field, e.g. workload.batch=8, accelerator.l2_capacity_MB=104 (repeatable)"},
    {"model", required_argument, OPT_MODEL, GIVEN_SET, "REF", "shortcut for --set model=REF"},
    {"accelerator", required_argument, OPT_ACCEL, GIVEN_SET, "REF",
     "shortcut for --set accelerator=REF (the scenario's cluster stays: a warning names the "
     "accelerator's own when the cluster is of another platform)"},
    {"cluster", required_argument, OPT_CLUSTER, GIVEN_SET, "REF",
     "shortcut for --set cluster=REF (the interconnect; its devices count unless --devices)"},
    {"devices", required_argument, OPT_DEVICES, GIVEN_SET, "N",
     "tensor-parallel degree (cluster.devices)"},
    {"ep", required_argument, OPT_EP, GIVEN_SET, "N",
     "expert-parallel ranks of a MoE model: experts split over N ranks, each over devices/N "
     "(cluster.expert_parallel)"},
    {"pp", required_argument, OPT_PP, GIVEN_SET, "N",
     "pipeline stages: the layers split over N stages of the tensor-parallel group each, "
     "stages across nodes (cluster.pipeline_parallel; uneven splits: --set "
     "cluster.pipeline_layers=32,31,...)"},
    {"dp", required_argument, OPT_DP, GIVEN_SET, "N",
     "data-parallel replicas: throughput x N, latency unchanged, per-device figures over all "
     "TP x PP x DP devices (cluster.data_parallel)"},
    {"sp", no_argument, OPT_SP, GIVEN_SET, NULL,
     "sequence parallelism inside the tensor-parallel group: each allreduce becomes a "
     "reduce-scatter and an all-gather, the norms run on 1/devices of the tokens "
     "(cluster.sequence_parallel; dense models)"},
    {"dp-attention", no_argument, OPT_DP_ATTENTION, GIVEN_SET, NULL,
     "data-parallel attention (MoE): each device its own sequences, their KV and whole "
     "attention weights; the routed experts one rank a device (--ep equal to --devices) or "
     "tensor parallel over the gathered tokens (--ep 1) (cluster.attention_data_parallel)"},
    {"spec-tokens", required_argument, OPT_SPEC_TOKENS, GIVEN_SET, "K",
     "speculative decoding: K drafted tokens per verify step (speculative.draft_tokens, 0..16)"},
    {"spec-accept", required_argument, OPT_SPEC_ACCEPT, GIVEN_SET, "A[,A2..]",
     "acceptance in [0, 1), one or one per position (speculative.acceptance)"},
    {"spec-draft", required_argument, OPT_SPEC_DRAFT, GIVEN_SET, "MODEL",
     "draft with MODEL (same vocabulary, same devices; speculative.draft_model)"},
    {"spec-mtp", required_argument, OPT_SPEC_MTP, GIVEN_SET, "N",
     "draft with the target's N MTP layers (speculative.mtp_layers; at most its "
     "num_nextn_predict_layers)"},
    {"batch", required_argument, OPT_BATCH, GIVEN_SET, "N", "workload.batch"},
    {"seq", required_argument, OPT_SEQ, GIVEN_SET, "N",
     "total sequence length in tokens (workload.seq_len); k = 1024 here: 16k = 16384, 1M = "
     "1048576 (as context lengths are counted)"},
    {"format", required_argument, 'f', GIVEN_FORMAT, "FMT", NULL /* the command's formats */},
    {"context", required_argument, OPT_CONTEXT, GIVEN_CONTEXT, "N",
     "context length in tokens (k = 1024; default: seq_len - 1 for decode, the prompt for "
     "prefill)"},
    {"phase", required_argument, OPT_PHASE, GIVEN_PHASE, "P", "decode (default) or prefill"},
    {"mode", required_argument, OPT_MODE, GIVEN_MODE, "M",
     "serial, fused or preserve (default preserve)"},
    {"layers", required_argument, OPT_LAYERS, GIVEN_LAYERS, "N",
     "decoder layers in the printed graph (default 2)"},
    {"stage", required_argument, OPT_STAGE, GIVEN_STAGE, "K",
     "the pipeline stage (0-based) a graph view shows, at one micro-batch: its receive first "
     "(default 0)"},
    {"devices-list", required_argument, OPT_DEVLIST, GIVEN_DEVLIST, "L",
     "device counts, comma separated (default 1,2,4,8,16)"},
    {"data-dir", required_argument, OPT_DATADIR, GIVEN_DATADIR, "DIR",
     "bundled data directory"},
    {"sweep", required_argument, OPT_SWEEP, GIVEN_SWEEP, "AXIS[=R]",
     "sweep l2, l2_bw, compute, hbm_bw, link_bw, devices, batch, seq, ep, pp, dp, sp (0 off, "
     "1 on) or split (the last pipeline stage's layers); R is START:STOP:STEP "
     "(units ok: 8MiB:256MiB:8MiB; STEP xF is geometric) or a list 1,4,16; up to 4 times for "
     "a grid"},
    {"optimize", required_argument, OPT_OPTIMIZE, GIVEN_OPTIMIZE, "AXIS[=LO:HI]",
     "the value of a continuous axis (l2, l2_bw, compute, hbm_bw, link_bw) or of the counts "
     "pp, dp and split (every value; bare, the axis's own range) maximising the objective, per "
     "mode"},
    {"objective", required_argument, OPT_OBJECTIVE, GIVEN_OBJECTIVE, "O",
     "what --optimize maximises: mm2 (tokens/s/mm2, default), usd (tokens/s per dollar) or "
     "joule (tokens per joule); search also takes device (tokens/s per device, its default)"},
    {"plot", required_argument, OPT_PLOT, GIVEN_PLOT, "FILE",
     "draw it with gnuplot (.png, .svg or .pdf); the CSV goes beside it as FILE.csv, not to "
     "stdout"},
    {"metric", required_argument, OPT_METRIC, GIVEN_METRIC, "COLUMN",
     "the result column a two-axis --plot colours its cells by (default "
     "speedup_preserve_vs_serial; e.g. density_preserve_tokens_per_s_per_mm2, preserve_tpot_s)"},
    {"compare", no_argument, OPT_COMPARE, GIVEN_COMPARE, NULL,
     "serial and preserve, one above the other (the CSV: the serial block, two blank lines, "
     "the preserve block)"},
    {"shard", required_argument, OPT_SHARD, GIVEN_SHARD, "K/N",
     "evaluate only the K-th of N slices of the grid (1 <= K <= N); join them with merge"},
    {"threads", required_argument, OPT_THREADS, GIVEN_THREADS, "N",
     "sweep threads (default: every CPU)"},
    {"concurrency", required_argument, OPT_CONCURRENCY, GIVEN_CONCURRENCY, "L",
     "serve: sequences in flight, comma separated (default 1,2,4,...,1024)"},
    {"chunk", required_argument, OPT_CHUNK, GIVEN_CHUNK, "N",
     "serve: tokens per step, decode tokens included (max_num_batched_tokens; default 2048)"},
    {"rule", required_argument, OPT_RULE, GIVEN_RULE, "R",
     "serve: decode_first (chunked prefill, default) or prefill_first (whole prompts first)"},
    {"rate", required_argument, OPT_RATE, GIVEN_RATE, "L",
     "serve: an open loop at these request rates (requests/s, comma separated) instead of "
     "--concurrency: each mode's sequences in flight found, or 'saturated'"},
    {"lengths", required_argument, OPT_LENGTHS, GIVEN_LENGTHS, "D",
     "serve: a distribution of request lengths instead of the scenario's one prompt and output: "
     "IN:OUT:SHARE classes separated by commas (at most 8; e.g. 4000:100:0.25,500:600:0.75), or "
     "a lengths file's name or path (bundled: azure-conv-2023, azure-code-2023; `list "
     "lengths`)"},
    {"arrival", required_argument, OPT_ARRIVAL, GIVEN_ARRIVAL, "A",
     "serve: staggered (a served population, default) or wave (a benchmark's clients at fixed "
     "lengths: sent together, ended together; prefill_first, or a --chunk that holds every "
     "prompt)"},
    {"burst", required_argument, OPT_BURST, GIVEN_BURST, "L",
     "serve: bursts of these many requests (comma separated), all sent at once (a benchmark's "
     "request rate inf): admitted up to the running limit, the run ends with the last; mean "
     "TTFT, TPOT, makespan and output tokens/s instead of a steady state"},
    {"max-running", required_argument, OPT_MAX_RUNNING, GIVEN_BURST, "N",
     "serve --burst: the engine's most running sequences per scheduler (vLLM's max_num_seqs; "
     "default none: only the HBM limits them)"},
    {"ttft-limit", required_argument, OPT_TTFT_LIMIT, GIVEN_LIMITS, "T",
     "serve: time-to-first-token limit for goodput (2s, 500ms)"},
    {"tpot-limit", required_argument, OPT_TPOT_LIMIT, GIVEN_LIMITS, "T",
     "serve: time-per-output-token limit for goodput (50ms)"},
    {"budget", required_argument, OPT_BUDGET, GIVEN_SPACE, "N",
     "search: the deployment's devices, filled with data-parallel replicas of each "
     "tensor-parallel group (default: one group)"},
    {"tp-list", required_argument, OPT_TP_LIST, GIVEN_SPACE, "L",
     "search: tensor-parallel degrees, comma separated (default: 1, 2, 4... up to a node's "
     "devices and the budget)"},
    {"pp-list", required_argument, OPT_PP_LIST, GIVEN_SPACE, "L",
     "search: pipeline stages per replica, comma separated (default 1; a replica is TP x PP "
     "devices)"},
    {"ep-list", required_argument, OPT_EP_LIST, GIVEN_SPACE, "L",
     "search: expert-parallel rank counts of a MoE model (default: the scenario's)"},
    {"chunks", required_argument, OPT_CHUNKS, GIVEN_SPACE, "L",
     "search: chunk budgets (tokens per step), comma separated (default 512,1024,2048,4096,"
     "8192)"},
    {"exhaustive", no_argument, OPT_EXHAUSTIVE, GIVEN_SPACE, NULL,
     "search: evaluate every candidate (no pruning; the same answer, slower)"},
    {"disagg", no_argument, OPT_DISAGG, GIVEN_SPACE, NULL,
     "search: disaggregated deployments too, each split of --budget into a prefill pool and a "
     "decode pool (instances x a TP of --tp-list each; --concurrency per decode instance), "
     "served as `disagg` serves them over the cluster's inter-node link"},
    {"mix", required_argument, OPT_MIX, GIVEN_SPACE, "M",
     "search: a weighted mix instead of --config alone, SCENARIO[@LENGTHS][=SHARE] members "
     "separated by commas (LENGTHS a lengths file or IN:OUT; SHARE of the output tokens, "
     "default 1): the chip that serves the fleet best, each member on its own best deployment"},
    {"min-user-rate", required_argument, OPT_MIN_USER_RATE, GIVEN_LIMITS, "R",
     "search: the floor of output tokens/s per user"},
    {"help", no_argument, 'h', 0, NULL, "this help (COMMAND --help: the command's)"},
    {"version", no_argument, 'V', 0, NULL, "the version"},
};
const size_t cli_option_count = sizeof cli_options / sizeof cli_options[0];

#define INPUTS (GIVEN_CONFIG | GIVEN_SET | GIVEN_DATADIR | GIVEN_FORMAT)
#define F(x) (1u << (x))

static const cli_command commands[] = {
    {"run", INPUTS, F(FMT_TABLE) | F(FMT_JSON) | F(FMT_CSV), NULL,
     "(the default) time per request, per decode step and tokens/s in the three modes serial, "
     "fused (GEMM+allreduce) and preserve",
     "The JSON keys are documented in docs/output-format.md.",
     "preserve-model --config llama70b --accelerator h100-sxm --set cluster=nvlink4-nvswitch "
     "--seq 32k --format json"},
    {"sweep", INPUTS | GIVEN_SWEEP | GIVEN_PLOT | GIVEN_SHARD | GIVEN_THREADS | GIVEN_METRIC,
     F(FMT_CSV) | F(FMT_JSON), NULL,
     "AXIS[=R]... (or --sweep AXIS[=R], repeated): the estimate over a grid of one to four "
     "axes, one CSV row per point",
     "The result columns follow the axis columns (docs/output-format.md); the # lines record "
     "the command, the resolved inputs' digest and the data directory.",
     "preserve-model --config llama70b --sweep l2=8MiB:256MiB:8MiB --plot l2.png"},
    {"optimize", INPUTS | GIVEN_OPTIMIZE | GIVEN_OBJECTIVE, F(FMT_CSV) | F(FMT_JSON), NULL,
     "AXIS[=LO:HI] (or --optimize AXIS[=LO:HI]): per mode, the axis value maximising the "
     "objective (a log grid, then Brent; the counts pp, dp and split: every value, ties to "
     "the smaller)",
     NULL, "preserve-model --config paper-dse --optimize l2=8MiB:512MiB --objective usd"},
    {"explain", INPUTS | GIVEN_CONTEXT | GIVEN_PHASE | GIVEN_STAGE, F(FMT_TABLE) | F(FMT_JSON), NULL,
     "per collective (allreduce, MoE all-to-all) of the preserve graph: what is prefetched, how "
     "many bytes (and routed experts), why it stops",
     NULL, "preserve-model explain --config llama70b --seq 64k --batch 16"},
    {"graph", INPUTS | GIVEN_CONTEXT | GIVEN_PHASE | GIVEN_MODE | GIVEN_LAYERS | GIVEN_STAGE,
     F(FMT_JSON) | F(FMT_DOT), NULL, "the per-device graph of one mode after insertion", NULL,
     "preserve-model graph --config llama8b --mode fused --format dot | dot -Tsvg >g.svg"},
    {"sensitivity", INPUTS, F(FMT_TABLE) | F(FMT_JSON) | F(FMT_CSV), NULL,
     "PRESERVE's tokens/s and speedups under each prefetch-consumer semantics (wait, stream) "
     "with and without HBM sharing between the streams: whether a verdict depends on an "
     "assumption",
     NULL, "preserve-model sensitivity --config llama70b-h100"},
    {"footprint", INPUTS | GIVEN_DEVLIST, F(FMT_TABLE) | F(FMT_JSON) | F(FMT_CSV), NULL,
     "per-device attention/MLP memory of one layer vs device count, beside the bundled "
     "accelerators' L2 sizes (the paper's Fig 2)",
     NULL, "preserve-model footprint --config mistral7b --devices-list 1,2,4,8"},
    {"resolve", INPUTS, F(FMT_CSV) | F(FMT_JSON), NULL,
     "every resolved input in SI units with its origin, file and source", NULL,
     "preserve-model resolve --config llama70b --set workload.batch=8"},
    {"timeline",
     INPUTS | GIVEN_CONTEXT | GIVEN_PHASE | GIVEN_MODE | GIVEN_PLOT | GIVEN_COMPARE | GIVEN_STAGE,
     F(FMT_CSV) | F(FMT_JSON), NULL,
     "the two-stream schedule of one decode layer (CSV or JSON; --plot draws it as a Gantt "
     "chart)",
     NULL,
     "preserve-model timeline --config llama70b --compare --plot layer.svg"},
    {"serve",
     INPUTS | GIVEN_CONCURRENCY | GIVEN_CHUNK | GIVEN_RULE | GIVEN_LIMITS | GIVEN_PLOT |
         GIVEN_SWEEP | GIVEN_ARRIVAL | GIVEN_RATE | GIVEN_LENGTHS | GIVEN_BURST,
     F(FMT_TABLE) | F(FMT_JSON) | F(FMT_CSV), NULL,
     "a served workload over concurrency: TTFT, TPOT, tokens/s per device and per user in the "
     "three modes (the throughput-interactivity front; --plot draws it)",
     "Closed-loop clients send the scenario's prompt (seq x prefill_frac tokens) and get its "
     "decode steps' tokens back; continuous batching under a chunk budget per step. --sweep "
     "AXIS=V1,V2,... (one axis, at most 8 values, e.g. l2=48MiB,96MiB,192MiB; any axis but "
     "batch: the sequences are --concurrency) gives a front per value, drawn as a family of "
     "curves. The CSV and JSON keys are in docs/output-format.md.",
     "preserve-model serve --config llama70b-h100 --concurrency 1,4,16,64,256 --plot front.png"},
    {"search",
     INPUTS | GIVEN_CONCURRENCY | GIVEN_RULE | GIVEN_LIMITS | GIVEN_PLOT | GIVEN_SWEEP |
         GIVEN_ARRIVAL | GIVEN_LENGTHS | GIVEN_SPACE | GIVEN_OBJECTIVE | GIVEN_THREADS |
         GIVEN_SHARD,
     F(FMT_TABLE) | F(FMT_JSON) | F(FMT_CSV), "[SHARD...]",
     "the best deployment per mode under latency limits: tensor-parallel degree, replicas of a "
     "device budget, chunk budget, concurrency (and hardware axes, pipeline stages with "
     "--pp-list), served as `serve` serves",
     "Each candidate is a served workload's steady state; those within --ttft-limit, "
     "--tpot-limit and --min-user-rate compete on --objective. The table gives each mode's best "
     "and the limit that stops it serving more; the CSV the Pareto front of the objective "
     "against tokens/s per user (--plot draws it). --sweep AXIS=V1,V2 (at most two of l2, l2_bw, "
     "compute, hbm_bw, link_bw) searches the chip too. --shard K/N writes the shard file of "
     "the K-th of N slices of the space; the shard files given as arguments, with the shards' "
     "own options, are merged into the unsharded search's answer, in any format.",
     "preserve-model search --config llama70b-h100 --budget 32 --tpot-limit 50ms "
     "--ttft-limit 2s"},
    {"validate", GIVEN_SET | GIVEN_DATADIR, 0, "[PATH...]",
     "check config files (default: every shipped data file)", NULL,
     "preserve-model validate my-accelerator.json"},
    {"list", GIVEN_DATADIR | GIVEN_FORMAT, F(FMT_TABLE) | F(FMT_JSON), "KIND",
     "the bundled names of a kind: models, accelerators, clusters, workloads, scenarios or "
     "runtimes",
     NULL, "preserve-model list accelerators"},
    {"merge", 0, 0, "FILE...", "join the CSVs of --shard K/N runs into the single run's CSV",
     "The shards must come from one sweep (their digests are checked) and each be whole.",
     "preserve-model merge shard*.csv >sweep.csv"},
    {"help", 0, 0, "[COMMAND]", "this overview, or a command's help", NULL,
     "preserve-model help explain"},
};

const cli_command *cli_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

const char *cli_shortopts(void)
{
    static char s[64];
    if (!s[0]) {
        size_t n = 0;
        s[n++] = ':';
        for (size_t i = 0; i < cli_option_count; i++)
            if (cli_options[i].id < 256) {
                s[n++] = (char)cli_options[i].id;
                if (cli_options[i].has_arg)
                    s[n++] = ':';
            }
        s[n] = '\0';
    }
    return s;
}

const struct option *cli_longopts(void)
{
    static struct option o[sizeof cli_options / sizeof cli_options[0] + 1];
    if (!o[0].name)
        for (size_t i = 0; i < cli_option_count; i++)
            o[i] = (struct option){cli_options[i].name, cli_options[i].has_arg, NULL,
                                   cli_options[i].id};
    return o;
}

const char *cli_given_name(unsigned bits)
{
    static char name[40];
    for (size_t i = 0; i < cli_option_count; i++)
        if (bits & cli_options[i].bit) {
            snprintf(name, sizeof name, "--%s", cli_options[i].name);
            return name;
        }
    return "?";
}

unsigned cli_given_bit(int id)
{
    for (size_t i = 0; i < cli_option_count; i++)
        if (cli_options[i].id == id)
            return cli_options[i].bit;
    return 0;
}

/* names[0..k) as words: "a, b or c". */
static void join_words(const char *const *names, size_t k, char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        const size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ", names[i]);
    }
}

void cli_formats_text(unsigned formats, char *buf, size_t n)
{
    static const char *const names[] = {"table", "json", "csv", "dot"};
    const char *got[4];
    size_t k = 0;
    for (int i = 0; i < 4; i++)
        if (formats & F(i))
            got[k++] = names[i];
    join_words(got, k, buf, n);
}

/* text from column `indent` on (the cursor is there), wrapped at 94 columns, and a line end. */
static void print_wrapped(FILE *f, int indent, const char *text)
{
    int col = indent;
    for (const char *w = text; *w;) {
        const char *sp = strchr(w, ' ');
        const int len = sp ? (int)(sp - w) : (int)strlen(w);
        if (col + len > 94 && col > indent) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        }
        fprintf(f, "%s%.*s", col > indent ? " " : "", len, w);
        col += len + (col > indent);
        w += len + (sp != NULL);
    }
    fputc('\n', f);
}

/* One option's line(s): "  -c, --config REF   help", the help wrapped at 94 columns. */
static void print_option(FILE *f, const cli_option *o, const cli_command *cmd)
{
    char head[64], fmts[64], help[400];
    snprintf(head, sizeof head, "%s%c%s--%s%s%s", o->id < 256 ? "-" : " ",
             o->id < 256 ? o->id : ' ', o->id < 256 ? ", " : "  ", o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
    if (o->id == 'f') {
        cli_formats_text(cmd ? cmd->formats : F(FMT_TABLE) | F(FMT_JSON) | F(FMT_CSV) |
                                                  F(FMT_DOT),
                         fmts, sizeof fmts);
        snprintf(help, sizeof help, "%s (default %s)", fmts,
                 !cmd ? "table; each command's help lists its own"
                 : cmd->formats & F(FMT_TABLE) ? "table"
                 : cmd->formats & F(FMT_CSV) ? "csv" : "json");
    } else if (o->id == OPT_DATADIR) {
        /* On one line, the path whole: scripts/check-install.sh reads it there. */
        fprintf(f, "  %-26s%s (default: %s; PRESERVE_MODEL_DATA sets it)\n", head, o->help,
                pm_default_data_dir());
        return;
    } else {
        snprintf(help, sizeof help, "%s", o->help);
    }
    /* A head as wide as the column gets its help on the next line, not glued to it. */
    if (strlen(head) >= 26)
        fprintf(f, "  %s\n%28s", head, "");
    else
        fprintf(f, "  %-26s", head);
    print_wrapped(f, 28, help);
}

static void print_overview(FILE *f)
{
    fprintf(f,
            "Usage: %s [COMMAND] [OPTIONS]\n"
            "\n"
            "Analytical model of tensor-parallel LLM inference with PRESERVE prefetching\n"
            "(weights and KV cache prefetched from HBM into L2 during allreduces).\n"
            "\nCommands ('%s help COMMAND' or '%s COMMAND --help': its options and an "
            "example):\n",
            prog, prog, prog);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const cli_command *c = &commands[i];
        char name[40];
        snprintf(name, sizeof name, "%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
        fprintf(f, "  %-19s", name);
        print_wrapped(f, 21, c->about);
    }
    /* disagg names two scenarios and parses its own options (disagg_cmd.c). */
    fprintf(f, "  %-19s", "disagg");
    print_wrapped(f, 21, "a prefill pool and a decode pool, each its own scenario and chip "
                         "(--prefill-config, --decode-config): TTFT with the KV transfer, "
                         "TPOT, the pools' ratio, each pool's best L2 (its own options: "
                         "'help disagg')");
    fprintf(f, "\nOptions (each command takes those its help lists):\n");
    for (size_t i = 0; i < cli_option_count; i++)
        print_option(f, &cli_options[i], NULL);
    fprintf(f,
            "\nCounts take multipliers: token counts (--seq, --context, the seq axis) count k "
            "as 1024\n(16k = 16384, 2M = 2097152, as context lengths are named); other counts "
            "k = 1000, Ki = 1024.\nBytes and bandwidths keep their units' meaning: MB = 1e6 "
            "bytes, MiB = 2^20; GBps = 1e9 B/s.\n"
            "\nAllreduce models (n bytes, p devices, link bandwidth B, start-up latency a):\n"
            "  ring 2(p-1)(a + n/(pB)); oneshot a + n/B (mesh) or a + (p-1)n/B (switch);\n"
            "  twoshot 2(a + n/(pB)) (mesh); tree 2 ceil(log2 p)(a + n/B);\n"
            "  hierarchical: intra-node reduce-scatter + inter-node ring + intra all-gather;\n"
            "  auto: the fastest the topology allows.\n"
            "\nData directory: %s\n",
            pm_default_data_dir());
}

static void cli_command_help(FILE *f, const cli_command *cmd);

/* A help longer than stdout's buffer fails while it is printed (a full disk): the reason is
 * kept for finish_output, which would otherwise find the stream failed and errno gone. */
static void note_help_failure(FILE *f)
{
    if (f == stdout && ferror(f))
        stdout_failed(errno);
}

void cli_help(FILE *f, const cli_command *cmd)
{
    if (!cmd) {
        print_overview(f);
        note_help_failure(f);
        return;
    }
    cli_command_help(f, cmd);
    note_help_failure(f);
}

static void cli_command_help(FILE *f, const cli_command *cmd)
{
    if (strcmp(cmd->name, "run") == 0)
        fprintf(f, "Usage: %s [run] [OPTIONS]\n", prog);
    else if (strcmp(cmd->name, "sweep") == 0)
        fprintf(f, "Usage: %s sweep AXIS[=R]... [OPTIONS]\n   or: %s --sweep AXIS[=R] "
                   "[--sweep AXIS[=R]]... [OPTIONS]\n", prog, prog);
    else if (strcmp(cmd->name, "optimize") == 0)
        fprintf(f, "Usage: %s optimize AXIS[=LO:HI] [OPTIONS]\n   or: %s --optimize "
                   "AXIS[=LO:HI] [OPTIONS]\n", prog, prog);
    else
        fprintf(f, "Usage: %s %s%s%s [OPTIONS]\n", prog, cmd->name, cmd->args ? " " : "",
                cmd->args ? cmd->args : "");
    fputc('\n', f);
    print_wrapped(f, 0, cmd->about);
    if (cmd->more)
        print_wrapped(f, 0, cmd->more);
    fprintf(f, "\nOptions:\n");
    for (size_t i = 0; i < cli_option_count; i++) {
        const cli_option *o = &cli_options[i];
        if ((o->bit && (cmd->options & o->bit)) || o->id == 'h')
            print_option(f, o, cmd);
    }
    fprintf(f, "\nExample:\n  %s\n", cmd->example);
}

const char *cli_suggest(const char *word, const char *const *names, size_t n, const char *prefix,
                        char *buf, size_t size)
{
    const char *near = pm_suggest(word, names, n);
    if (near)
        snprintf(buf, size, " (did you mean '%s%s'?)", prefix, near);
    else if (size)
        buf[0] = '\0';
    return buf;
}

int cli_choice(const char *opt, const char *arg, const char *const *names, size_t n, int *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    char list[200], hint[96];
    join_words(names, n, list, sizeof list);
    return usage_error("%s: expected %s (got '%s')%s", opt, list, arg,
                       cli_suggest(arg, names, n, "", hint, sizeof hint));
}

int cli_unknown_option(const char *arg)
{
    char word[64], hint[96];
    const char *name = arg + strspn(arg, "-");
    snprintf(word, sizeof word, "%.*s", (int)strcspn(name, "="), name);
    const char *names[sizeof cli_options / sizeof cli_options[0]];
    for (size_t i = 0; i < cli_option_count; i++)
        names[i] = cli_options[i].name;
    if (arg[0] == '-' && arg[1] != '-' && arg[1] && arg[2]) /* a short option: "-x" */
        return usage_error("unknown option '-%c'", arg[1]);
    /* An abbreviation of two or more options is ambiguous, not unknown. */
    size_t prefixes = 0;
    for (size_t i = 0; i < cli_option_count && word[0]; i++)
        prefixes += strncmp(names[i], word, strlen(word)) == 0;
    if (prefixes > 1)
        return usage_error("option '--%s' is ambiguous (%zu options start so)", word, prefixes);
    return usage_error("unknown option '%.*s'%s", (int)strcspn(arg, "="), arg,
                       cli_suggest(word, names, cli_option_count, "--", hint, sizeof hint));
}

int cli_unknown_command(const char *cmd)
{
    const char *names[sizeof commands / sizeof commands[0]];
    const size_t n = sizeof commands / sizeof commands[0];
    for (size_t i = 0; i < n; i++)
        names[i] = commands[i].name;
    char hint[96];
    cli_suggest(cmd, names, n, "", hint, sizeof hint);
    return usage_error("unknown command '%s'%s", cmd, hint);
}
