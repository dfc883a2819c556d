# GPU validation: predicted against measured, log-log, one point type per metric, with the
# y = x line and the +-25 % band. Draws only; every number comes from the CSV written by
# scripts/validate-gpu.sh (metric, measured_s, predicted_s, status; only the rows the summary
# counts are drawn: status ok or ok-moe, not refused, exceeds-hbm or below-bound).
# Variables (gnuplot -e): data (the CSV), rows (the validated file, for the title), out, term.
set terminal @term
set output out
set datafile separator ","
set datafile missing ""
set datafile commentschars "#"
# A series' key entry only where the file has its rows (an empty title leaves it out); counted
# before the log scale and ranges, which stats would apply to the counts.
metrics = "gemm_us attention_us tpot_ms ttft_ms e2e_s allreduce_us"
count(m) = (strcol("metric") eq m && strcol("status")[1:2] eq "ok") ? 1 : 0
array rows_of[words(metrics)]
do for [i = 1:words(metrics)] {
    stats data using (count(word(metrics, i))) nooutput
    rows_of[i] = STATS_sum
}
rows(m) = sum [i = 1:words(metrics)] (word(metrics, i) eq m ? rows_of[i] : 0)
key(m, t) = rows(m) > 0 ? t : ""
set termoption noenhanced
set logscale xy
set format x "10^{%T}"
set format y "10^{%T}"
set termoption enhanced
set xlabel "measured (s)"
set ylabel "predicted (s)"
set title sprintf("preserve-model vs published GPU measurements (%s)", rows)
set grid
set key top left box opaque
set xrange [5e-6:300]
set yrange [5e-6:300]
set size square
sel(m) = (strcol("metric") eq m && strcol("status")[1:2] eq "ok") ? column("predicted_s") : NaN
plot x with lines lc rgb "black" lw 1.5 title "predicted = measured", \
     1.25 * x with lines lc rgb "gray50" dt 2 title "+-25 %", \
     0.75 * x with lines lc rgb "gray50" dt 2 notitle, \
     data using (column("measured_s")):(sel("gemm_us")) with points pt 6 ps 1.1 lc rgb "#1b9e77" title key("gemm_us", "GEMM kernel"), \
     data using (column("measured_s")):(sel("attention_us")) with points pt 4 ps 1.1 lc rgb "#d95f02" title key("attention_us", "decode attention kernel"), \
     data using (column("measured_s")):(sel("tpot_ms")) with points pt 7 ps 1.0 lc rgb "#7570b3" title key("tpot_ms", "decode step (TPOT)"), \
     data using (column("measured_s")):(sel("ttft_ms")) with points pt 5 ps 1.0 lc rgb "#e7298a" title key("ttft_ms", "prefill (TTFT)"), \
     data using (column("measured_s")):(sel("e2e_s")) with points pt 9 ps 1.2 lc rgb "#66a61e" title key("e2e_s", "request (static batch)"), \
     data using (column("measured_s")):(sel("allreduce_us")) with points pt 3 ps 1.1 lc rgb "#a6761d" title key("allreduce_us", "allreduce")
