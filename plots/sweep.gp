# A 1-D sweep written by `preserve-model --sweep AXIS --plot FILE`: request time, speedup and
# throughput density per mode against the swept axis (left), tokens/s per dollar and tokens
# per joule (right). Draws only; every number comes from the CSV (the speedups are its
# speedup_* columns).
# Variables (gnuplot -e): csv, out, term, xcol (the axis column name), xtitle (its title, with
# its unit), ttl (the scenario), xlog (1: a geometric axis, drawn on a log scale), base (the
# scenario's own value of the axis, marked by a dashed line) and baselabel (its label; empty:
# no marker), have_cost, have_energy and have_area (0: the accelerator has no cost, energy or
# area data, and the panel says so). Points whose weights and KV cache exceed the HBM (fits_hbm 0) are ringed, those whose largest die is over the reticle (over_reticle 1) crossed.
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set datafile columnheaders
set termoption noenhanced
set grid lt 1 lw 1 lc rgb '#dddddd'
# The key has a panel of its own (the sixth, empty otherwise): inside a panel it would cover
# curves whose place depends on the sweep.
unset key
# A geometric axis: a log scale with a tick at each grid value (XT adds them to each plot).
XT = ""
# Its grid values as tick labels, slanted: seven-digit values side by side would run together.
if (xlog) { set logscale x 2; XT = ":xtic(strcol(xcol))"; set xtics rotate by 30 right font ",9" }
set autoscale xfix
set offsets graph 0.02, graph 0.02, 0, 0
# One value on the axis (one point, or one valid point among NaN rows): a range around it, where
# gnuplot would warn of an empty one.
stats csv using (column("serial_request_s") == column("serial_request_s") ? column(xcol) : NaN) nooutput
# The range drawn (x_lo to x_hi): the valid points' (what autoscale takes), or the range set here.
x_lo = STATS_min
x_hi = STATS_max
if (x_lo == x_hi) {
    x_one = x_lo
    if (xlog) { x_lo = x_one / 2; x_hi = x_one * 2 } else {
        x_half = x_one != 0 ? abs(x_one) / 2 : 1
        x_lo = x_one - x_half; x_hi = x_one + x_half
    }
    set xrange [x_lo : x_hi]
}
if (!exists("have_cost")) have_cost = 1
if (!exists("have_energy")) have_energy = 1
if (!exists("have_area")) have_area = 1
# Fixed margins, so the panels of a column share their x axis.
set lmargin 12
set rmargin 3
# The scenario's own value of the axis: a dashed line (arrow 1), drawn only where it lies on
# the swept range (an arrow at a value beyond it is not clipped: it stood in the gutter between
# the panels); beyond it, the key says so instead.
base_on = baselabel ne "" && base >= x_lo && base <= x_hi
if (baselabel ne "" && !base_on) { baselabel = baselabel.sprintf(" (%s the swept range: not drawn)", base < x_lo ? "below" : "above") }
BASE_ARROW = "if (base_on) { set arrow 1 from first base, graph 0 to first base, graph 1 nohead dashtype 2 lw 1.5 lc rgb '#555555' }"
eval BASE_ARROW
# A ring around each point of the column c whose weights and KV cache exceed the HBM (every
# point is plotted, the ring sized 0 where it fits: a data set with none would warn).
ring_ps(dummy) = column("fits_hbm") == 0 ? 1.8 : 0
ring(c) = sprintf("'' using (column(xcol)):(column(\"%s\")):(ring_ps(0)) with points pt 6 ps variable lw 1.5 lc rgb '#000000' notitle", c)
RINGS_REQ = ring("serial_request_s").", ".ring("fused_request_s").", ".ring("preserve_request_s")
RINGS_SPEEDUP = ring("speedup_preserve_vs_serial").", ".ring("speedup_preserve_vs_fused")
# A red cross on each point whose largest die is over the 858 mm2 reticle (over_reticle 1: a
# design no fab can print as one piece), on the panels that price the silicon.
cross_ps(dummy) = column("over_reticle") == 1 ? 2.2 : 0
cross(c) = sprintf("'' using (column(xcol)):(column(\"%s\")):(cross_ps(0)) with points pt 2 ps variable lw 2 lc rgb '#c00000' notitle", c)
CROSSES(a, b, d) = cross(a).", ".cross(b).", ".cross(d)
RINGS_MM2 = ring("density_serial_tokens_per_s_per_mm2").", ".ring("density_fused_tokens_per_s_per_mm2").", ".ring("density_preserve_tokens_per_s_per_mm2").", ".CROSSES("density_serial_tokens_per_s_per_mm2", "density_fused_tokens_per_s_per_mm2", "density_preserve_tokens_per_s_per_mm2")
RINGS_USD = ring("serial_tokens_per_s_per_usd").", ".ring("fused_tokens_per_s_per_usd").", ".ring("preserve_tokens_per_s_per_usd").", ".CROSSES("serial_tokens_per_s_per_usd", "fused_tokens_per_s_per_usd", "preserve_tokens_per_s_per_usd")
RINGS_J = ring("serial_tokens_per_J").", ".ring("fused_tokens_per_J").", ".ring("preserve_tokens_per_J").", ".CROSSES("serial_tokens_per_J", "fused_tokens_per_J", "preserve_tokens_per_J")
# Y ticks at a round step near a quarter of the panel's data range (gnuplot's own choice
# crowds these short panels: a dozen ticks 0.01 apart in the per-joule one). YTICKS(cols,
# with) is run with eval before a panel's plot: cols its columns, with a value the range must
# hold (the speedup panel's 1), or NaN; a flat range leaves gnuplot's choice.
round_step(r) = (ts_e = 10**floor(log10(r)), ts_m = r / ts_e, (ts_m <= 1 ? 1 : ts_m <= 2 ? 2 : ts_m <= 5 ? 5 : 10) * ts_e)
YTICKS(cols, with) = sprintf("y_lo = %g; y_hi = %g; do for [c in \"%s\"] { stats csv using (column(c)) nooutput; y_lo = STATS_min < y_lo ? STATS_min : y_lo; y_hi = STATS_max > y_hi ? STATS_max : y_hi }; if (y_hi > y_lo) { set ytics round_step((y_hi - y_lo) / 4) } else { set ytics autofreq }", with == with ? with : 1e300, with == with ? with : -1e300, cols)
MODES(suffix) = sprintf("serial_%s fused_%s preserve_%s", suffix, suffix, suffix)
# An empty panel says why (an accelerator without cost, energy or area data), on linear axes;
# NO_DATA(what) is run with eval in the panel's place.
NO_DATA(what) = sprintf("unset logscale x; unset arrow 1; set ytics autofreq; set label 1 'no %s coefficients in the accelerator' at graph 0.5, 0.5 center; plot [0:1] [0:1] -1 notitle; unset label 1; if (xlog) { set logscale x 2 }; ", what).BASE_ARROW
set style line 1 lw 2 pt 7 ps 0.6 lc rgb '#4C72B0'
set style line 2 lw 2 pt 5 ps 0.6 lc rgb '#DD8452'
set style line 3 lw 2 pt 9 ps 0.7 lc rgb '#55A868'
# The speedup panel's two ratios: black and dark grey dashed, not the modes' colours (a ratio
# is not a mode).
set style line 4 lw 2 pt 13 ps 0.7 lc rgb '#222222'
set style line 5 lw 2 pt 11 ps 0.7 dt 2 lc rgb '#777777'
# What decided the figure (the datatypes, EP, the consumers, the runtime) on its own line.
if (exists("facts") && facts ne "") { ttl = ttl."\n".facts }
set multiplot layout 3,2 columnsfirst title ttl
set ylabel "request time (s)"
set title "End-to-end request time"
eval YTICKS(MODES("request_s"), NaN)
# The marker's entry in the key: a line with no points.
plot csv using (column(xcol)):(column("serial_request_s"))@XT with linespoints ls 1 title "serial", \
     '' using (column(xcol)):(column("fused_request_s"))@XT with linespoints ls 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("preserve_request_s"))@XT with linespoints ls 3 title "PRESERVE", \
     NaN with lines dashtype 2 lw 1.5 lc rgb '#555555' notitle, @RINGS_REQ
set ylabel "speedup (x)"
set title "PRESERVE's speedup"
# The scale reaches down to 1 (no speedup), marked by a grey line.
set yrange [*<1:*]
eval YTICKS("speedup_preserve_vs_serial speedup_preserve_vs_fused", 1)
set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#999999'
plot csv using (column(xcol)):(column("speedup_preserve_vs_serial"))@XT with linespoints ls 4 title "vs serial", \
     '' using (column(xcol)):(column("speedup_preserve_vs_fused"))@XT with linespoints ls 5 title "vs fused GEMM+allreduce", \
     @RINGS_SPEEDUP
unset arrow 2
set autoscale y
unset key
set ylabel "tokens/s per mm²"
set title "Per mm² (generated tokens/s / (devices x die mm²))"
set xlabel xtitle
if (have_area) {
    eval YTICKS("density_serial_tokens_per_s_per_mm2 density_fused_tokens_per_s_per_mm2 density_preserve_tokens_per_s_per_mm2", NaN)
    plot csv using (column(xcol)):(column("density_serial_tokens_per_s_per_mm2"))@XT with linespoints ls 1 title "serial", \
         '' using (column(xcol)):(column("density_fused_tokens_per_s_per_mm2"))@XT with linespoints ls 2 title "fused GEMM+allreduce", \
         '' using (column(xcol)):(column("density_preserve_tokens_per_s_per_mm2"))@XT with linespoints ls 3 title "PRESERVE", \
         @RINGS_MM2
} else {
    eval NO_DATA("area")
}
unset xlabel
set ylabel "tokens/s per USD"
set title "Per dollar (tokens/s / (devices x device USD))"
if (have_cost) {
    eval YTICKS(MODES("tokens_per_s_per_usd"), NaN)
    plot csv using (column(xcol)):(column("serial_tokens_per_s_per_usd"))@XT with linespoints ls 1 title "serial", \
         '' using (column(xcol)):(column("fused_tokens_per_s_per_usd"))@XT with linespoints ls 2 title "fused GEMM+allreduce", \
         '' using (column(xcol)):(column("preserve_tokens_per_s_per_usd"))@XT with linespoints ls 3 title "PRESERVE", \
         @RINGS_USD
} else {
    eval NO_DATA("cost")
}
set ylabel "tokens per J"
set title "Per joule (tokens / energy of all devices)"
set xlabel xtitle
if (have_energy) {
    eval YTICKS(MODES("tokens_per_J"), NaN)
    plot csv using (column(xcol)):(column("serial_tokens_per_J"))@XT with linespoints ls 1 title "serial", \
         '' using (column(xcol)):(column("fused_tokens_per_J"))@XT with linespoints ls 2 title "fused GEMM+allreduce", \
         '' using (column(xcol)):(column("preserve_tokens_per_J"))@XT with linespoints ls 3 title "PRESERVE", \
         @RINGS_J
} else {
    eval NO_DATA("energy")
}
# The key panel: the modes, the speedups' two curves, and the scenario's own value.
unset border; unset tics; unset xlabel; unset ylabel; unset title; unset arrow; unset grid
unset logscale x
set key center center Left reverse font ",10" spacing 1.3
plot [0:1] [0:1] NaN with linespoints ls 1 title "serial", \
     NaN with linespoints ls 2 title "fused GEMM+allreduce", \
     NaN with linespoints ls 3 title "PRESERVE", \
     NaN with linespoints ls 4 title "speedup panel: PRESERVE vs serial", \
     NaN with linespoints ls 5 title "speedup panel: PRESERVE vs fused", \
     NaN with lines dashtype 2 lw 1.5 lc rgb '#555555' title (baselabel ne "" ? baselabel : " "), \
     NaN with points pt 6 ps 1.8 lw 1.5 lc rgb '#000000' title "ringed: weights + KV cache exceed the HBM (fits_hbm 0)", \
     NaN with points pt 2 ps 2.2 lw 2 lc rgb '#c00000' title "crossed: a die over the 858 mm² reticle (over_reticle 1)"
unset multiplot
