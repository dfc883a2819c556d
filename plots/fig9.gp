# Fig 9: PRESERVE's speedup over the serial baseline against the peak compute, one line per L2
# bandwidth (paper-dse scenario). Draws only; every number comes from the CSV written by
# scripts/fig9.sh (compute_TFLOPS, then speedup_l2bw_<B>TBps per L2 bandwidth B).
# Variables (gnuplot -e): csv, out, term, l2bws (the L2 bandwidths B in TB/s, space-separated).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set logscale x 2
set xrange [70:2300]
set xtics 100, 2, 1600
set xlabel "peak compute, int8 (TFLOP/s)"
set ylabel "speedup PRESERVE vs serial (x)"
set title "Fig 9: PRESERVE speedup vs compute throughput, one line per L2 bandwidth (paper-dse)\npaper: more L2 bandwidth adds up to 10% speedup"
set grid
set key outside right top title "L2 bandwidth"
plot for [i = 1:words(l2bws)] csv using (column("compute_TFLOPS")):(column("speedup_l2bw_" . word(l2bws, i) . "TBps")) \
     with linespoints lw 2 dt i pt (5 + i) ps 1.3 title word(l2bws, i) . " TB/s"
