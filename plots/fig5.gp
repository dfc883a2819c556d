# Fig 5: PRESERVE's speedup over the fused GEMM+allreduce baseline against the batch, one line per
# model (4 NPUs, sequence 1K); the dashed line is parity (below it the fused baseline wins).
# Draws only; every number comes from the CSVs written by scripts/fig5.sh
# (batch, speedup_preserve_vs_fused).
# Variables (gnuplot -e): dir (holding fig5-<scenario>.csv), out, term, scenarios and models
# (space-separated, in the same order).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set logscale x 2
set xtics (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
set xlabel "batch (sequences)"
set ylabel "speedup PRESERVE vs fused GEMM+allreduce (x)"
set title "Fig 5: PRESERVE vs the fused GEMM+allreduce baseline, 4 NPUs, seq 1K, int8\npaper: up to 1.19x at small batch; the fused baseline wins at batch >= 512, down to 0.93x"
set grid
set key bottom left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb "#555555"
# The paper's batch from which the fused baseline wins (a statement of the paper, not data).
set arrow from first 512, graph 0 to first 512, graph 1 nohead dashtype 4 lw 1.5 lc rgb "#888888"
set label "paper: fused wins from batch 512" at first 512, graph 0.6 right offset -0.5,0 font ",9" tc rgb "#777777"
plot for [i = 1:words(scenarios)] dir . "/fig5-" . word(scenarios, i) . ".csv" \
     using (column("batch")):(column("speedup_preserve_vs_fused")) with linespoints lw 2 dt i pt (5 + i) ps 1.3 title word(models, i)
