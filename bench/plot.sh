#!/usr/bin/env bash
# bench/plot.sh — figures from the benchmarks' CSV output, drawn by gnuplot (Debian
# package gnuplot-nox): GFLOP/s against size and against tile size, stargemm's ratio
# to its peers, and the measured tile loads against the model's.
#
# Usage: plot.sh [--out DIR] [--format png|svg|png,svg] [--plots LIST] [--name NAME]
#                [--by-file] FILE.csv...
#   --out DIR      where the images go (default: the current directory; created)
#   --format F     png, svg, or both as "png,svg" (the default)
#   --plots LIST   a comma list of size, tile, ratio, loads (default: all, each one
#                  drawn when the data allows it, a note on stderr for the others;
#                  a plot named here that the data does not allow is an error)
#   --name NAME    file names NAME_PLOT.FORMAT (default: the first file's name
#                  without .csv)
#   --by-file      each file its own configurations (named in the legends), for runs
#                  that differ in what no column says (a policy, a machine, a build);
#                  by default the files' rows are pooled
#   --help         this text
#
# Input: what stargemm_pdgemm --csv, stargemm_bsgemm --csv, bench/compare.sh and
# bench/compare_dbcsr.sh print (every file is read, all together one data set). A line
# "impl,..." is a header and names the columns of the lines after it (one file may
# hold several: compare_dbcsr.sh prints the peer's and stargemm's); blank lines,
# lines starting with '#' and lines without a comma (the comparison scripts'
# summaries) are skipped. Columns are found by their header names, never by position:
# impl and gflops always; m, n, k (size); nb, or lo and hi (tile size: block-sparse
# tiles are uniform in [lo, hi], drawn at (lo + hi)/2); pred_loads and loads, and
# pred_mpi_tiles and mpi_tiles when present (loads). threads (the block-sparse
# benchmarks) is read as workers.
#
# A configuration is a row's impl, ranks, workers, grid, tile size (none for --impl
# blas and cublas, one dgemm call), problem (m, n, k, transposes, alpha, beta,
# densities, seed, eps), dist, whether it ran out of core, and its file with
# --by-file; its repetitions (one row each, any number of files or rounds) become one
# point, their median. A line of a plot joins the configurations that differ only in
# its x column; its legend names what differs between lines.
#
# Plots (NAME_PLOT.FORMAT):
#   size   median GFLOP/s against the size N (m = n = k), or (m n k)^(1/3)
#   tile   median GFLOP/s against the tile size
#   ratio  stargemm's median GFLOP/s over each peer's (every other impl) on the same
#          problem, against the size (against the tile size when there is one size and
#          several tiles): the peer with the same ranks and workers when it ran so,
#          else its best configuration
#   loads  measured against predicted tile loads per device (GPU, or disk -> RAM) and
#          MPI tiles received per rank, one point per out-of-core configuration, with
#          the line measured = predicted
#
# Exit status: 0; 1 if gnuplot fails; 2 on a usage error, a file that does not parse,
# a missing column, or a requested plot that the data does not allow.
set -euo pipefail

prog=plot.sh
out=.
formats=png,svg
plots=""
name=""
by_file=0

die() {
	echo "$prog: $*" >&2
	exit 2
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case "$1" in
	--out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
	--format) [ $# -ge 2 ] || die "--format needs png, svg or png,svg"; formats=$2; shift 2 ;;
	--plots) [ $# -ge 2 ] || die "--plots needs a list"; plots=$2; shift 2 ;;
	--name) [ $# -ge 2 ] || die "--name needs a name"; name=$2; shift 2 ;;
	--by-file) by_file=1; shift ;;
	--help|-h) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "no CSV file given (see --help)"
IFS=, read -ra fmt_list <<<"$formats"
[ ${#fmt_list[@]} -ge 1 ] || die "--format needs png, svg or png,svg"
for f in "${fmt_list[@]}"; do
	case "$f" in png|svg) ;; *) die "--format: '$f' is neither png nor svg" ;; esac
done
explicit=1
if [ -z "$plots" ]; then
	plots=size,tile,ratio,loads
	explicit=0
fi
IFS=, read -ra plot_list <<<"$plots"
[ ${#plot_list[@]} -ge 1 ] || die "--plots needs a list of size, tile, ratio, loads"
for p in "${plot_list[@]}"; do
	case "$p" in size|tile|ratio|loads) ;; *) die "--plots: unknown plot '$p' (size, tile, ratio, loads)" ;; esac
done
for f in "$@"; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		die "$f: no such readable file"
	fi
done
[ -n "$name" ] || name=$(basename "$1" .csv)
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "--name: '$name' must be letters, digits, '.', '_' or '-'"
command -v gnuplot >/dev/null ||
	die "gnuplot not found (Debian: apt-get install gnuplot-nox)"
mkdir -p "$out" || die "cannot create the directory '$out'"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- reading and aggregating (POSIX awk: Debian's default is mawk) ---------------
# Writes, for each plot P: $work/P.pts, one point a line "series<TAB>x<TAB>y[<TAB>label]",
# or $work/P.why, why the data allows no such plot; and $work/meta, "key<TAB>value"
# lines (axis labels, repetitions per point).
awk -v dir="$work" -v by_file="$by_file" '
function fail(msg) { print "plot.sh: " msg > "/dev/stderr"; failed = 1; exit 2 }
function numeric(s) { return s ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/ }
function get(c) { return (c in col) ? $col[c] : "" }
function where() { return FILENAME ":" FNR }
function header(    i) {
	split("", col)
	for (i = 1; i <= NF; i++)
		col[$i] = i
	ncol = NF
	hline = FNR
	if (!("gflops" in col))
		fail(where() ": the header has no column \"gflops\" (the rate); is this the " \
		     "output of stargemm_pdgemm or stargemm_bsgemm --csv?")
}
# A value that must be a number when present.
function number(c, v) {
	if (v != "" && !numeric(v))
		fail(where() ": column \"" c "\" is \"" v "\", not a number")
	return v
}
function row(    i, c, v) {
	if (!hline)
		fail(where() ": data before any header line (one starting with \"impl,\"); " \
		     "expected the CSV output of stargemm_pdgemm or stargemm_bsgemm --csv")
	if (NF != ncol)
		fail(where() ": " NF " fields, but the header (line " hline ") has " ncol)
	n++
	for (i = 1; i <= nconf; i++) {
		c = conf[i]
		v = get(c == "workers" && !("workers" in col) ? "threads" : c)
		if (c == "ooc")
			v = ("case" in col) ? (get("case") != "" ? "yes" : "no") : \
			    ("pred_loads" in col) ? (get("pred_loads") + 0 > 0 ? "yes" : "no") : ""
		if (c == "file")
			v = by_file ? FILENAME : ""
		val[n, c] = v
	}
	for (i = 1; i <= nnum; i++)
		val[n, nums[i]] = number(nums[i], get(nums[i]))
	# One dgemm call (stargemm_pdgemm --impl blas, cublas) has no tile: its nb is unused.
	if (val[n, "impl"] == "blas" || val[n, "impl"] == "cublas")
		val[n, "nb"] = ""
	if (get("impl") == "")
		fail(where() ": empty impl")
	if (val[n, "gflops"] == "")
		fail(where() ": empty gflops")
}
BEGIN {
	FS = ","
	nconf = split("impl ranks workers P Q nb lo hi m n k transA transB alpha beta " \
		      "density_a density_b density_c seed eps dist ooc file", conf, " ")
	nnum = split("gflops m n k nb lo hi pred_loads loads pred_mpi_tiles mpi_tiles", nums, " ")
	nprob = split("m n k transA transB alpha beta lo hi density_a density_b density_c " \
		      "seed eps", prob, " ")
}
FNR == 1 { hline = 0 }
{ sub(/\r$/, "") }
/^[ \t]*$/ || /^#/ || index($0, ",") == 0 { next }
/^impl,/ { header(); next }
{ row() }

# ---- after reading: configurations, medians, points ----
function has_size(r) { return val[r, "m"] != "" && val[r, "n"] != "" && val[r, "k"] != "" }
function size(r,    m, nn, k) {
	m = val[r, "m"] + 0; nn = val[r, "n"] + 0; k = val[r, "k"] + 0
	if (m == nn && nn == k)
		return m
	square = 0
	return exp(log(m * nn * k) / 3)
}
function has_tile(r) { return val[r, "nb"] != "" || (val[r, "lo"] != "" && val[r, "hi"] != "") }
function tile(r) {
	if (val[r, "nb"] != "") {
		tile_nb = 1
		return val[r, "nb"] + 0
	}
	if (val[r, "lo"] != val[r, "hi"])
		ranged = 1
	return (val[r, "lo"] + val[r, "hi"]) / 2
}
# Key of row r over the configuration columns, leaving out those in the set skip.
function key(r, skip,    i, k) {
	k = ""
	for (i = 1; i <= nconf; i++)
		if (!(conf[i] in skip))
			k = k SUBSEP val[r, conf[i]]
	return k
}
# Legend of row r: impl (unless skipped) and the columns that vary, not in skip.
# A square size that varies in all three is "N=...".
function label(r, skip,    i, c, s, square_n) {
	s = ("impl" in skip) ? "" : val[r, "impl"]
	square_n = val[r, "m"] == val[r, "n"] && val[r, "n"] == val[r, "k"] && \
		   ("m" in varies) && ("n" in varies) && ("k" in varies) && !("m" in skip)
	for (i = 2; i <= nconf; i++) {
		c = conf[i]
		if (square_n && (c == "m" || c == "n" || c == "k")) {
			if (c == "m")
				s = s (s == "" ? "" : " ") "N=" val[r, c]
		} else if (!(c in skip) && (c in varies) && val[r, c] != "") {
			s = s (s == "" ? "" : " ") c "=" val[r, c]
		}
	}
	return s
}
# The label of an out-of-core point: what varies, and measured / predicted.
function point_label(r, measured, predicted,    s) {
	if ("impl" in varies)
		s = label(r, none)
	else
		s = label(r, only_impl)
	return s (s == "" ? "" : ": ") sprintf("%.3f", measured / predicted)
}
function median(g,    i, j, x, m) {
	m = cnt[g]
	for (i = 1; i <= m; i++)
		v[i] = sample[g, i]
	for (i = 2; i <= m; i++) {   # insertion sort: a handful of values
		x = v[i]
		for (j = i - 1; j >= 1 && v[j] > x; j--)
			v[j + 1] = v[j]
		v[j + 1] = x
	}
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
function add(g, y) { sample[g, ++cnt[g]] = y + 0 }
# A point of @p plot, the median of @p reps repetitions (a global the caller sets).
function emit(plot, series, x, y, lab) {
	printf "%s\t%.10g\t%.10g%s\n", series, x, y, lab == "" ? "" : "\t" lab > (dir "/" plot ".pts")
	npts[plot]++
	if (!(plot in rmin) || reps < rmin[plot]) rmin[plot] = reps
	if (reps > rmax[plot]) rmax[plot] = reps
}
function why(plot, msg) { print msg > (dir "/" plot ".why") }
END {
	if (failed)
		exit 2
	if (n == 0) {
		print "plot.sh: no data rows in the files given" > "/dev/stderr"
		exit 2
	}
	# What varies: columns with two different non-empty values.
	for (r = 1; r <= n; r++)
		for (i = 1; i <= nconf; i++) {
			c = conf[i]
			if (val[r, c] == "")
				continue
			if (!(c in first))
				first[c] = val[r, c]
			else if (first[c] != val[r, c])
				varies[c] = 1
		}
	# The grid only in the legends where it is not told by the ranks (P x 1).
	for (r = 1; r <= n; r++) {
		grid = val[r, "P"] "x" val[r, "Q"]
		if (!(val[r, "ranks"] in grid_of))
			grid_of[val[r, "ranks"]] = grid
		else if (grid_of[val[r, "ranks"]] != grid)
			own_grid = 1
	}
	if (!own_grid) {
		delete varies["P"]
		delete varies["Q"]
	}
	split("", none)
	only_impl["impl"] = 1
	skip_size["m"] = skip_size["n"] = skip_size["k"] = 1
	skip_tile["nb"] = skip_tile["lo"] = skip_tile["hi"] = 1
	skip_ratio["impl"] = skip_ratio["m"] = skip_ratio["n"] = skip_ratio["k"] = 1
	skip_ratio_tile["impl"] = skip_ratio_tile["nb"] = 1
	skip_ratio_tile["lo"] = skip_ratio_tile["hi"] = 1
	# Medians per configuration (every column), of the rate and of the loads.
	for (r = 1; r <= n; r++) {
		g = key(r, none)
		if (!(g in rep)) { rep[g] = r; order[++ngroups] = g }
		add(g, val[r, "gflops"])
		if (val[r, "pred_loads"] + 0 > 0 && val[r, "loads"] != "") {
			add("L" g, val[r, "loads"]); add("P" g, val[r, "pred_loads"])
		}
		if (val[r, "pred_mpi_tiles"] + 0 > 0 && val[r, "mpi_tiles"] != "") {
			add("M" g, val[r, "mpi_tiles"]); add("Q" g, val[r, "pred_mpi_tiles"])
		}
	}
	square = 1; ranged = 0
	for (e = 1; e <= ngroups; e++) {
		g = order[e]; r = rep[g]; med[g] = median(g)
		reps = cnt[g]
		if (has_size(r))
			emit("size", label(r, skip_size), size(r), med[g])
		if (has_tile(r))
			emit("tile", label(r, skip_tile), tile(r), med[g])
		if (("L" g) in cnt) {
			x = median("P" g); y = median("L" g); reps = cnt["L" g]
			emit("loads", "tile loads per device", x, y, point_label(r, y, x))
		}
		if (("M" g) in cnt) {
			x = median("Q" g); y = median("M" g); reps = cnt["M" g]
			emit("loads", "MPI tiles received per rank", x, y, point_label(r, y, x))
		}
	}
	if (!npts["size"]) why("size", "it needs the columns m, n and k")
	if (!npts["tile"]) why("tile", "it needs the column nb, or lo and hi")
	if (!npts["loads"])
		why("loads", "it needs out-of-core rows (--ooc) with the columns pred_loads and " \
		    "loads, and pred_loads > 0")
	# Ratios: each stargemm configuration over each peer on the same problem (the
	# peer with the same ranks and workers, else its best).
	for (e = 1; e <= ngroups; e++) {
		g = order[e]; r = rep[g]
		if (val[r, "impl"] == "stargemm" || !has_size(r))
			continue
		p = val[r, "impl"]
		pb = problem(r, p)
		rs = pb SUBSEP val[r, "ranks"] SUBSEP val[r, "workers"]
		if (med[g] > best[pb]) best[pb] = med[g]
		if (med[g] > best_same[rs]) best_same[rs] = med[g]
		peers[p] = 1
	}
	for (e = 1; e <= ngroups; e++) {
		g = order[e]; r = rep[g]
		if (val[r, "impl"] != "stargemm" || !has_size(r))
			continue
		for (p in peers) {
			pb = problem(r, p)
			rs = pb SUBSEP val[r, "ranks"] SUBSEP val[r, "workers"]
			ref = (rs in best_same) ? best_same[rs] : best[pb]
			if (ref > 0) {
				ratio_row[++nratio] = r; ratio_peer[nratio] = p
				ratio[nratio] = med[g] / ref; ratio_reps[nratio] = cnt[g]
				sizes[size(r)] = 1
				if (has_tile(r)) tiles[tile(r)] = 1
			}
		}
	}
	# Against the size; against the tile size when all share one size and tiles vary.
	ratio_x = count(sizes) == 1 && count(tiles) > 1 ? "tile" : "size"
	for (i = 1; i <= nratio; i++) {
		r = ratio_row[i]; reps = ratio_reps[i]
		if (ratio_x == "tile")
			lab = label(r, skip_ratio_tile)
		else
			lab = label(r, skip_ratio)
		emit("ratio", "stargemm" (lab == "" ? "" : " " lab) " / " ratio_peer[i],
		     ratio_x == "tile" ? tile(r) : size(r), ratio[i])
	}
	print "ratio_x\t" ratio_x > (dir "/meta")
	if (!npts["ratio"])
		why("ratio", "it needs rows of impl stargemm and of a peer (another impl) on the " \
		    "same problem")
	print "square\t" square > (dir "/meta")
	print "tile\t" (!ranged ? "" : tile_nb ? "nb; block-sparse: (lo + hi) / 2" : \
			"(lo + hi) / 2") > (dir "/meta")
	for (p in rmin)
		print "reps_" p "\t" (rmin[p] == rmax[p] ? rmin[p] : rmin[p] " to " rmax[p]) > (dir "/meta")
}
function count(a,    k, c) {
	c = 0
	for (k in a)
		c++
	return c
}
# Key of row r'"'"'s problem, for impl p.
function problem(r, p,    i, k) {
	k = p
	for (i = 1; i <= nprob; i++)
		k = k SUBSEP val[r, prob[i]]
	return k
}
' "$@" || exit 2

meta() {
	awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$work/meta"
}

# A gnuplot string: double quotes, with \ and " escaped.
gp_string() {
	printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

# ---- drawing ---------------------------------------------------------------------
# The points of plot $1, sorted, as gnuplot data blocks (one per line of the plot,
# "x<TAB>y<TAB>label") in $work/$1.dat, their titles in $work/$1.titles, and the ranges
# "xmin xmax ymin ymax" on stdout.
blocks() {
	sort -t"$(printf '\t')" -k1,1 -k2,2g "$work/$1.pts" | awk -F'\t' -v dat="$work/$1.dat" \
		-v titles="$work/$1.titles" '
		$1 != last { if (NR > 1) printf "\n\n" > dat; print $1 > titles; last = $1 }
		{ print $2 "\t" $3 "\t" $4 > dat }
		NR == 1 || $2 < x0 { x0 = $2 } NR == 1 || $2 > x1 { x1 = $2 }
		NR == 1 || $3 < y0 { y0 = $3 } NR == 1 || $3 > y1 { y1 = $3 }
		END { print x0, x1, y0, y1 }'
}

# Axis settings for values in [lo, hi]: log base 2 when they span a factor of 8 (sizes
# and tiles double), a widened range around a single value.
axis() {
	local a=$1 lo=$2 hi=$3
	awk -v a="$a" -v lo="$lo" -v hi="$hi" 'BEGIN {
		if (lo == hi)
			printf "set %srange [%g:%g]\n", a, (lo > 0 ? lo * 0.8 : lo - 1), (lo > 0 ? lo * 1.2 : lo + 1)
		else if (lo > 0 && hi / lo >= 8)
			printf "set logscale %s 2\n", a
	}'
}

# The gnuplot commands of plot $1 (without terminal and output).
script() {
	local p=$1 range x0 x1 y0 y1 i=0 reps square tile
	range=$(blocks "$p")
	read -r x0 x1 y0 y1 <<<"$range"
	reps=$(meta "reps_$p")
	square=$(meta square)
	tile=$(meta tile)
	printf '%s\n' 'set datafile separator "\t"'
	echo 'set key below'
	echo 'set grid'
	case "$p" in
	size|tile)
		if [ "$p" = size ]; then
			echo "set title $(gp_string "GFLOP/s against size (median of $reps repetitions per point)")"
			if [ "$square" = 1 ]; then
				echo 'set xlabel "size N (m = n = k)"'
			else
				echo 'set xlabel "size (m n k)^(1/3)"'
			fi
		else
			echo "set title $(gp_string "GFLOP/s against tile size (median of $reps repetitions per point)")"
			echo "set xlabel $(gp_string "tile size${tile:+ ($tile)}")"
		fi
		echo 'set ylabel "GFLOP/s"'
		axis x "$x0" "$x1"
		echo 'set yrange [0:*]'
		;;
	ratio)
		echo "set title $(gp_string "stargemm against its peers: ratio of median GFLOP/s (stargemm: $reps repetitions per point)")"
		if [ "$(meta ratio_x)" = tile ]; then
			echo "set xlabel $(gp_string "tile size${tile:+ ($tile)}")"
		elif [ "$square" = 1 ]; then
			echo 'set xlabel "size N (m = n = k)"'
		else
			echo 'set xlabel "size (m n k)^(1/3)"'
		fi
		echo 'set ylabel "stargemm GFLOP/s / peer GFLOP/s"'
		axis x "$x0" "$x1"
		echo 'set yrange [0:*]'
		echo 'set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2'
		;;
	loads)
		echo "set title $(gp_string "Tiles moved against the model (medians of $reps repetitions)")"
		echo 'set xlabel "predicted by the model (tiles)"'
		echo 'set ylabel "measured (tiles)"'
		awk -v lo="$(printf '%s\n%s\n' "$x0" "$y0" | sort -g | head -n1)" \
			-v hi="$(printf '%s\n%s\n' "$x1" "$y1" | sort -g | tail -n1)" 'BEGIN {
			if (lo > 0 && hi / lo >= 50) {
				print "set logscale xy 10"
				printf "set xrange [%g:%g]\nset yrange [%g:%g]\n", lo / 1.5, hi * 4, lo / 1.5, hi * 1.5
			} else {   # room on the right for the labels
				printf "set xrange [0:%g]\nset yrange [0:%g]\n", hi * 1.35, hi * 1.1
			}
		}'
		;;
	esac
	local style='with linespoints pointsize 1.2 linewidth 1.5'
	[ "$p" = loads ] && style='with points pointsize 1.5 linewidth 1.5'
	local clauses=() title
	while IFS= read -r title; do
		clauses+=("'$work/$p.dat' index $i using 1:2 $style title $(gp_string "$title")")
		i=$((i + 1))
	done <"$work/$p.titles"
	if [ "$p" = loads ]; then
		clauses+=("x with lines dashtype 2 linecolor rgb 'gray40' title \"measured = predicted\"")
		# Each point's configuration, while they are few enough to read.
		[ "$(wc -l <"$work/$p.pts")" -le 12 ] &&
			clauses+=("'$work/$p.dat' using 1:2:3 with labels left offset char 1,0 font ',8' notitle")
	fi
	local IFS=,
	echo "plot ${clauses[*]}"
}

terminal() {
	case "$1" in
	png) echo 'set terminal pngcairo size 900,600 noenhanced font "Sans,10"' ;;
	svg) echo 'set terminal svg size 900,600 noenhanced font "Sans,10" background "white"' ;;
	esac
}

# Plots the data does not allow: an error when asked for by name, else a note.
todo=()
for p in "${plot_list[@]}"; do
	if [ -s "$work/$p.pts" ]; then
		todo+=("$p")
	elif [ "$explicit" = 1 ]; then
		die "no $p plot: $(cat "$work/$p.why")"
	else
		echo "$prog: no $p plot: $(cat "$work/$p.why")" >&2
	fi
done
[ ${#todo[@]} -gt 0 ] || die "nothing to plot in $*"
status=0
for p in "${todo[@]}"; do
	script "$p" >"$work/$p.gp"
	for f in "${fmt_list[@]}"; do
		file="$out/${name}_$p.$f"
		if { terminal "$f"; echo "set output $(gp_string "$file")"; cat "$work/$p.gp"; } |
			gnuplot 2>"$work/gnuplot.err" && [ -s "$file" ]; then
			echo "$file"
		else
			echo "$prog: gnuplot failed on $file:" >&2
			cat "$work/gnuplot.err" >&2
			status=1
		fi
	done
done
exit "$status"
