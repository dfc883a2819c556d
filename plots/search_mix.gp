# A search over a weighted mix of models and workloads, written by
# `preserve-model search --mix ... --sweep AXIS --plot FILE`: along the hardware axis, the mix's
# objective per mode (1 / sum of share / member's objective: one chip design's fleet, each
# member on its own best deployment within the limits) as solid lines, and each member's own
# best (preserve) as dashed lines, so that the mix's best point shows between the members'.
# Draws only; every number comes from the CSV or the variables.
# Variables (gnuplot -e): csv, out, term, ttl, names (the members' scenarios, space separated),
# members (their count), xcol (the axis's column), ylab (the objective's column), disagg (1: the
# CSV has each member's layout, m<i>_layout: a member whose best is disaggregated there is
# marked with an open square on its line).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set datafile columnheaders
set termoption noenhanced
set grid lt 1 lw 1 lc rgb '#dddddd'
set title ttl
set xlabel xcol
set ylabel "best within the limits: ".ylab
set key outside bottom center horizontal box opaque maxrows 3
# The tics and the axis label, and below them the key: 4 rows, one a member, one for the
# disaggregated mark.
set bmargin 10 + members + ((exists("disagg") && disagg > 0) ? 1 : 0)
set yrange [0:*]
set style line 1 lw 2 pt 7 ps 0.8 lc rgb '#4C72B0'
set style line 2 lw 2 pt 5 ps 0.8 lc rgb '#DD8452'
set style line 3 lw 2 pt 9 ps 1.0 lc rgb '#55A868'
of(m, c) = strcol("mode") eq m ? column(c) : NaN
best(m, c) = (strcol("mode") eq m && column("best") > 0) ? column(c) : NaN
split(i) = (exists("disagg") && disagg > 0) ? \
           (strcol(sprintf("m%d_layout", i)) ne "colocated" && strcol(sprintf("m%d_layout", i)) ne "none") : 0
pooled(i) = split(i) ? of("preserve", sprintf("m%d_objective", i)) : NaN
plot csv using (of("serial", xcol)):(of("serial", "mix_objective")) with linespoints ls 1 title "mix, serial", \
     csv using (of("fused", xcol)):(of("fused", "mix_objective")) with linespoints ls 2 title "mix, fused", \
     csv using (of("preserve", xcol)):(of("preserve", "mix_objective")) with linespoints ls 3 title "mix, preserve", \
     csv using (best("preserve", xcol)):(best("preserve", "mix_objective")) with points pt 6 ps 2.6 lw 2 lc rgb '#55A868' title "the mix's best (preserve)", \
     for [i=1:members] csv using (of("preserve", xcol)):(of("preserve", sprintf("m%d_objective", i))) with lines dt 2 lw 1.5 lc rgb (i == 1 ? '#8172B2' : i == 2 ? '#937860' : '#DA8BC3') title sprintf("%s alone (preserve)", word(names, i)), \
     for [i=1:((exists("disagg") && disagg > 0) ? members : 0)] csv using (of("preserve", xcol)):(pooled(i)) with points pt 4 ps 1.8 lw 1.5 lc rgb (i == 1 ? '#8172B2' : i == 2 ? '#937860' : '#DA8BC3') title (i == 1 ? "a member's best disaggregated (prefill and decode pools)" : "")
