# Fig 7: throughput density (generated tokens/s per mm^2 of die, all devices) against the L2
# capacity, without prefetching (serial) and with PRESERVE (paper-dse scenario), and the two
# modes' optima found by `--optimize l2` (labelled points; the fused mode's row is not drawn).
# Draws only; every number comes from the CSVs written by scripts/fig7.sh.
# Variables (gnuplot -e): csv (the l2 sweep), opt (mode,best_l2_capacity_MiB,
#   density_tokens_per_s_per_mm2,...), out, term.
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set xlabel "L2 capacity (MiB)"
set ylabel "throughput density (tokens/s per mm^2)"
set title "Fig 7: throughput density vs L2 capacity (paper-dse); points: each mode's optimum over 8-512 MiB\npaper: without prefetch the density peaks at 8 MB; with prefetch it rises up to 104 MB; 11.8 -> 14.8 tokens/s/mm^2 (1.25x)"
set grid
set key top right
set xrange [0:*]
set xtics 32
plot csv using (column("l2_capacity_MiB")):(column("density_serial_tokens_per_s_per_mm2")) with linespoints lw 2 pt 6 lc rgb "#4C72B0" title "serial (no prefetch)", \
     '' using (column("l2_capacity_MiB")):(column("density_preserve_tokens_per_s_per_mm2")) with linespoints lw 2 pt 7 lc rgb "#DD8452" title "PRESERVE", \
     opt using (column("best_l2_capacity_MiB")):(strcol("mode") eq "fused" ? NaN : column("density_tokens_per_s_per_mm2")) with points pt 3 ps 2.5 lw 2 lc rgb "#C44E52" title "optimum (--optimize l2)", \
     opt using (column("best_l2_capacity_MiB")):(strcol("mode") eq "fused" ? NaN : column("density_tokens_per_s_per_mm2")):(sprintf("%s: %.4g MiB, %.4g", strcol("mode"), column("best_l2_capacity_MiB"), column("density_tokens_per_s_per_mm2"))) with labels left offset 1.2,0.6 font ",9" notitle
