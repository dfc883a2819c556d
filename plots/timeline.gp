# timeline.gp - the two-stream schedule of one decoder layer as a Gantt chart; with
# `timeline --compare`, one panel per mode (serial above preserve) on one time axis.
# Input (from `preserve-model timeline --plot FILE`): csv (lane_index,lane,node,kind,start_us,
# end_us,bytes; one data block per panel), out, term, ttl (the scenario), panels (1 or 2), xmin,
# xmax (the time axis, us), prefix (the shown layer's node prefix, "L1.", left out of the labels),
# ttl0, ttl1 (the panels' titles) and t_end0, t_end1 (each panel's layer length, us). Computes
# nothing: bars from start to end per lane, a label on each bar wide enough to hold it.
set terminal @term
set output out
set datafile separator ','
set datafile commentschars '#'
set termoption noenhanced
set xrange [xmin:xmax]
set ytics ('compute' 0, 'collectives' 1, 'prefetch (HBM to L2)' 2)
# Room above the prefetch lane for the marker's label.
set yrange [-0.6:2.95]
set grid xtics lt 1 lw 1 lc rgb '#dddddd'
set key off
set style fill solid 0.85 border rgb '#333333'
set palette defined (0 '#4C72B0', 1 '#DD8452', 2 '#55A868')
unset colorbox
set cbrange [0:2]
set lmargin 22
set rmargin 3
# A label is the node's name without "PF." (the lane says it) and without the shown layer's
# prefix: PF.L1.Gate reads Gate, PF.L2.QKV (the next layer's) L2.QKV.
strip(s, p) = s[1:strlen(p)] eq p ? s[strlen(p) + 1:] : s
# A prefetch of a layer's attention fetches its KV cache, as explain says (PF.L1.Attention reads
# "KV cache"); the other prefetches fetch the weights of the operation they name.
ends(s, e) = strlen(s) >= strlen(e) && s[strlen(s) - strlen(e) + 1:] eq e
label(s) = ends(s, ".Attention") && s[1:3] eq "PF." ? strip(strip(s, "PF."), prefix)[1:strlen(strip(strip(s, "PF."), prefix)) - 9]."KV cache" : strip(strip(s, "PF."), prefix)
# A bar too narrow for its label gets a short one, by its kind: AR (allreduce), A2A (all-to-all),
# KV (a KV prefetch), Attn (attention), W (another prefetch's weights); none for the rest.
short(s, k) = k eq "AllReduce" || k eq "FusedMatMulAllReduce" ? "AR" : k eq "AllToAll" ? "A2A" : k eq "SelfAttention" ? "Attn" : k eq "Prefetch" ? (ends(s, ".Attention") ? "KV" : "W") : ""
# It is drawn when the bar is wider than the label: about 105 characters of the terminal's font
# span the time axis at every terminal's size (plot.c scales the fonts with the canvas); a label
# too wide for its bar is drawn at three quarters of the size when it fits so.
char_us = (xmax - xmin) / 105.0
fits(s, w) = w > (strlen(label(s)) + 2) * char_us
fits_small(s, w) = !fits(s, w) && w > (strlen(label(s)) + 2) * char_us * 0.75
fits_short(s, k, w) = !fits(s, w) && !fits_small(s, w) && strlen(short(s, k)) > 0 && w > (strlen(short(s, k)) + 1) * char_us * 0.75
# What decided the figure (the datatypes, EP, the consumers, the runtime) on its own line.
if (exists("facts") && facts ne "") { ttl = ttl."\n".facts }
set multiplot layout panels, 1 title ttl
do for [p = 0:panels - 1] {
    t_end = p == 0 ? t_end0 : t_end1
    set title (p == 0 ? ttl0 : ttl1)
    if (p == panels - 1) { set xlabel 'time from the start of the layer (us)' } else { unset xlabel }
    set arrow 1 from t_end, graph 0 to t_end, graph 1 nohead dashtype 2 lc rgb '#777777'
    set label 1 'next layer' at t_end, graph 1 offset -0.5,-0.8 right tc rgb '#555555'
    plot csv index p using (($5 + $6) / 2):1:(($6 - $5) / 2):(0.33):1 with boxxyerror fc palette, \
         '' index p using (fits(strcol(3), $6 - $5) ? ($5 + $6) / 2 : 1/0):1:(label(strcol(3))) with labels, \
         '' index p using (fits_small(strcol(3), $6 - $5) ? ($5 + $6) / 2 : 1/0):1:(label(strcol(3))) with labels font ',9', \
         '' index p using (fits_short(strcol(3), strcol(4), $6 - $5) ? ($5 + $6) / 2 : 1/0):1:(short(strcol(3), strcol(4))) with labels font ',9'
}
unset multiplot
