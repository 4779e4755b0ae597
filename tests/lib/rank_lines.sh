# Sourced by the test scripts: phynet's report prints one per-rank count line for each set of ranks
# whose counts are equal ("# ranks 0-3,6: ops ..."); rank_lines <log> prints them one per rank
# ("# rank 0: ops ...", in rank order), the form the checks read.
rank_lines() {  # rank_lines <log>
  awk '/^# ranks? [0-9][0-9,-]*: / {
         list = $3; sub(/:$/, "", list); rest = $0; sub(/^# ranks? [0-9,-]+: /, "", rest)
         n = split(list, parts, ",")
         for (i = 1; i <= n; i++) {
           if (split(parts[i], ends, "-") == 2) { lo = ends[1]; hi = ends[2] } else { lo = hi = parts[i] }
           for (r = lo + 0; r <= hi + 0; r++) print r "\t# rank " r ": " rest
         }
       }' "$1" | sort -n -k1,1 | cut -f2-
}
