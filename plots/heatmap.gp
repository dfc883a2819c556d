# A 2-D grid written by `preserve-model --sweep A --sweep B --plot FILE`: one result column per
# cell (metric: PRESERVE's speedup over the serial baseline unless --metric names another), one
# cell per grid point, centred on it, every point drawn. Draws only:
# every number comes from the CSV. Two blank lines end each value of the first axis, so a
# point's data block index and its index in the block are its grid position: the cells sit at
# those positions (pixels of an image, or boxes of half-width 0.5), the same size whether an axis is
# linear, geometric or a list, and the ticks carry the grid values.
# Variables (gnuplot -e): csv, out, term, xcol, ycol (the axes' column names), xtitle, ytitle
# (their titles, with units), ttl (the scenario), cells (1: print each cell's value), xevery,
# yevery (a tick at every n-th grid value), nx, ny (the number of values of each axis), metric
# (the column the cells show).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set datafile columnheaders
set termoption noenhanced
# What decided the figure (the datatypes, EP, the consumers, the runtime) on its own line.
if (exists("facts") && facts ne "") { ttl = ttl."\n".facts }
if (!exists("metric")) { metric = "speedup_preserve_vs_serial" }
is_speedup = metric eq "speedup_preserve_vs_serial"
set title ttl."\n".(is_speedup ? "PRESERVE speedup over the serial baseline" : metric)
set bmargin 5
set label 2 "grey: not a valid point (the CSV says why); hatched, *: the weights and KV cache exceed the HBM (fits_hbm 0)" at screen 0.99, screen 0.015 right font ',10' tc rgb '#555555'
set xlabel xtitle
set ylabel ytitle
set cblabel (is_speedup ? "speedup, PRESERVE vs serial (x)" : metric)
# A speedup's scale starts at 1 (no speedup) or below, so a small spread of values does not look
# large; another metric's spans its values.
if (metric[1:8] eq "speedup_") { set cbrange [*<1:*] } else { set cbrange [*:*] }
set palette defined (0 '#fff5eb', 1 '#fdd0a2', 2 '#fd8d3c', 3 '#e6550d', 4 '#a63603')
set key off
set tics out nomirror
set xtics scale 0
set ytics scale 0
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
# Invalid points (NaN, read as missing) have no value: their cells show this background.
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fc rgb '#d9d9d9' fs solid noborder
sp = metric
xtick(dummy) = int(column(-2)) % xevery == 0 ? strcol(xcol) : ""
ytick(dummy) = int(column(0)) % yevery == 0 ? strcol(ycol) : ""
cell(dummy) = !cells ? "" : strcol(sp) eq "" ? "invalid" : sprintf(column("fits_hbm") != 0 ? "%.3g" : "%.3g*", column(sp))
# Points whose weights and KV cache exceed the HBM: hatched over their colour (every cell is
# plotted, the hatch sized 0 where it fits: a data set with none would warn).
hatch(dummy) = column("fits_hbm") == 0 ? 0.5 : 0
# An image where both axes have two values or more (no seams between cells), else boxes.
if (nx >= 2 && ny >= 2) {
    plot csv using -2:0:(column(sp)) with image, \
         '' using -2:0:(hatch(0)):(hatch(0)) with boxxyerror fs transparent pattern 4 noborder lc rgb '#444444', \
         '' using -2:0:(cell(0)):xtic(xtick(0)):ytic(ytick(0)) with labels
} else {
    plot csv using -2:0:(0.5):(0.5):(column(sp)) with boxxyerror fc palette fs solid 1.0 noborder, \
         '' using -2:0:(hatch(0)):(hatch(0)) with boxxyerror fs transparent pattern 4 noborder lc rgb '#444444', \
         '' using -2:0:(cell(0)):xtic(xtick(0)):ytic(ytick(0)) with labels
}
