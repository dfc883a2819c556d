# The Pareto fronts of a search under latency limits, written by
# `preserve-model search --plot FILE`: per mode, the candidates (deployment, chunk budget,
# hardware point, concurrency) that meet the limits and that no other beats on both the
# objective and the tokens/s per user, the best of each mode ringed and labelled with its
# deployment. Draws only; every number comes from the CSV or the variables.
# Variables (gnuplot -e): csv, out, term, ttl (the workload and limits), facts (what decided
# it), ylab (the objective's column), disagg (1: the CSV has a layout column, and a
# disaggregated best is labelled with its pools), hw (the CSV's hardware columns, at most two,
# separated by a space: the best's label names its hardware point; "" or unset: none), apart
# (1: serial's best is another candidate than PRESERVE's, and is labelled too, below its ring;
# each label then names its mode).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set datafile columnheaders
set termoption noenhanced
set grid lt 1 lw 1 lc rgb '#dddddd'
if (exists("facts") && facts ne "") { ttl = ttl."\n".facts }
set title ttl
set xlabel "interactivity: output tokens/s per user (1 / TPOT)"
set ylabel "best within the limits: ".ylab
set logscale x 2
set key bottom left box opaque # the fronts fall from the top left: the corner left free
set offsets graph 0.04, graph 0.04, graph 0.08, 0
set yrange [0:*]
set style line 1 lw 2 pt 7 ps 0.9 lc rgb '#4C72B0'
set style line 2 lw 2 pt 5 ps 0.9 lc rgb '#DD8452'
set style line 3 lw 2 pt 9 ps 1.1 lc rgb '#55A868'
of(m, c) = strcol("mode") eq m ? column(c) : NaN
best(m, c) = (strcol("mode") eq m && column("best") > 0) ? column(c) : NaN
pools(dummy) = (exists("disagg") && disagg > 0) ? strcol("layout") ne "colocated" : 0
hwn = exists("hw") ? words(hw) : 0
hwat(i) = hwn >= i ? sprintf("%s%s %g", i > 1 ? ", " : "\n", word(hw, i), column(word(hw, i))) : ""
lab(dummy) = (pools(0) ? sprintf("%s, %g per decode instance", strcol("layout"), column("concurrency")) : sprintf("TP%d x PP%d x DP%d, chunk %d, %g in flight", column("tp"), column("pp"), column("dp"), column("chunk"), column("concurrency"))) . hwat(1) . hwat(2)
apart_ = exists("apart") ? apart : 0
who(m) = apart_ > 0 ? m." best: " : ""
# (a clause of its own only where drawn: a clause without a point warns; the macro is expanded
# only where no apostrophe comes before it on the command)
serial_label = apart_ > 0 ? ", csv using (best(\"serial\", \"tokens_per_s_per_user\")):(best(\"serial\", \"objective\")):(who(\"serial\").lab(0)) with labels offset char 1, char -1.2 left font \",9\" tc rgb '#4C72B0' notitle" : ""
plot csv using (of("serial", "tokens_per_s_per_user")):(of("serial", "objective")) with linespoints ls 1 title "serial", \
     csv using (of("fused", "tokens_per_s_per_user")):(of("fused", "objective")) with linespoints ls 2 title "fused", \
     csv using (of("preserve", "tokens_per_s_per_user")):(of("preserve", "objective")) with linespoints ls 3 title "preserve", \
     csv using (best("preserve", "tokens_per_s_per_user")):(best("preserve", "objective")) with points pt 6 ps 2.6 lw 2 lc rgb '#55A868' title "the best of each mode", \
     csv using (best("serial", "tokens_per_s_per_user")):(best("serial", "objective")) with points pt 6 ps 2.6 lw 2 lc rgb '#4C72B0' notitle, \
     csv using (best("fused", "tokens_per_s_per_user")):(best("fused", "objective")) with points pt 6 ps 2.6 lw 2 lc rgb '#DD8452' notitle, \
     csv using (best("preserve", "tokens_per_s_per_user")):(best("preserve", "objective")):(who("preserve").lab(0)) with labels offset char 1, char 1.2 left font ",9" tc rgb '#333333' notitle @serial_label
