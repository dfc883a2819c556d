/*
 * commands.h - the commands of the tool, one file per concept, each called only by main.c's
 * dispatch. Each returns the exit status: 0, EXIT_CONFIG or EXIT_USAGE.
 */
#ifndef PM_CLI_COMMANDS_H
#define PM_CLI_COMMANDS_H

#include "cli.h"

/* run.c: the estimate of one scenario (table, JSON or CSV). */
int cmd_run(const cli *c);
/* graph_cmd.c: the graph of one mode (JSON or DOT), and what each allreduce prefetches. */
int cmd_graph(const cli *c);
int cmd_explain(const cli *c);
/* sensitivity_cmd.c: PRESERVE under each prefetch-consumer semantics and HBM sharing. */
int cmd_sensitivity(const cli *c);
/* footprint_cmd.c: per-device memory of one layer against the device count. */
int cmd_footprint(const cli *c);
/* info.c: the resolved inputs, checks of config files, and the bundled names. */
int cmd_resolve(const cli *c);
int cmd_validate(const cli *c, int argc, char **argv);
int cmd_list(const cli *c, int argc, char **argv);
/* sweep_cmd.c: --sweep (with --plot and --shard). */
int cmd_sweep(const cli *c);
/* optimize.c: --optimize. */
int cmd_optimize(const cli *c);
/* merge.c: the CSVs of --shard runs joined. */
int cmd_merge(int argc, char **argv);
/* timeline.c: the two-stream schedule of one layer. */
int cmd_timeline(const cli *c);
/* serve_cmd.c: a served workload's steady state over concurrency (the front). */
int cmd_serve(const cli *c);
/* burst_cmd.c: serve --burst: bursts of requests sent at once (a transient). */
int serve_burst(const cli *c);
/* disagg_cmd.c: a disaggregated deployment (its own options: argv from "disagg" on). */
int cmd_disagg(int argc, char **argv);
/* search_cmd.c: the best deployment under latency limits, and the Pareto front. */
int cmd_search(const cli *c, int n_files, char **files);
/* search_cmd.c's spec of the command line over scenario s, and an objective's column (with its
 * unit): search_mix_cmd.c makes each member's spec so. */
/* A prefill instance's most load (aiconfigurator's derating), the disagg command's default and
 * search --disagg's. */
#define CLI_DISAGG_MAX_LOAD_FRAC 0.9
int search_make_spec(const cli *c, const pm_scenario *s, pm_search_spec *sp);
/* A device count set for search's scenario (--devices, --set cluster.devices=) refused: the
 * search gives each candidate its own (--tp-list, --budget). 0 or EXIT_USAGE said on stderr. */
int search_refuse_devices(const cli *c);
const char *search_objective_column(pm_search_objective o);
/* The limits of sp for a figure's title: "; TTFT <= 2 s; TPOT <= 50 ms", or "; no latency
 * limit". */
void search_limits_words(const pm_search_spec *sp, char *t, size_t n);
/* A hardware point of n_hw axes in words: " at l2_capacity_MiB 96, hbm_bandwidth_TBps 3.35"
 * ("" without axes). */
void search_hw_words(const pm_axis *axes, int n_hw, const double *hw, char *t, size_t n);
/* A header's line on the disaggregated candidates ("# disaggregated deployments too (layout
 * P<x>xTP<p>+D<y>xTP<d>...") and their KV link (s's, or NULL: each member's) when sp->disagg;
 * nothing otherwise. */
void search_disagg_note(FILE *f, const pm_search_spec *sp, const pm_scenario *s);
/* Why a search's points are not served (pm_search_result.outside), for its header's space
 * line: " (decode-first: a chunk budget at or below the concurrency...)" ("" when no point can
 * be: prefill-first). */
const char *outside_words(const pm_search_spec *sp);
/* A search's device budget in words into buf: "32 devices", or that there is none. */
const char *budget_words(int budget, char *buf, size_t n);
/* A candidate's layout keys in JSON, each followed by ", ": "layout", "prefill_tp",
 * "prefill_instances", "decode_tp", "decode_instances" (0 for a co-located one). */
void search_json_layout(const pm_search_candidate *k);
/* search_mix_cmd.c: search --mix, the chip that serves a weighted mix best (n_files: the
 * arguments, which a mix refuses). */
int cmd_search_mix(const cli *c, int n_files);

#endif
