# pg_cmds.awk: turns wire/pg_cmd.def (the command list) into pg_cmds.rl, the
# ragel alternations that recognise PMI-1 and PMI-2 command names.  Each
# name's leaving action stores its enum, so the parsers need no strcmp chain
# and a new command is one line in pg_cmd.def.
#   awk -f parser/pg_cmds.awk wire/pg_cmd.def > parser/pg_cmds.rl
/^PG_CMD\(/ {
    line = $0
    sub(/^PG_CMD\(/, "", line)
    split(line, f, /[ ,]+/)               # f[1] enum, f[2] proto, f[3] dir
    name = line
    sub(/^[^"]*"/, "", name)
    sub(/".*$/, "", name)
    if (f[2] != "PMI1" && f[2] != "PMI2") {
        print "pg_cmds.awk: bad protocol in: " $0 > "/dev/stderr"
        exit 1
    }
    alt = sprintf("\"%s\" %%{ ps.msg->cmd = PG_CMD_%s; }", name, f[1])
    n[f[2]]++
    body[f[2]] = body[f[2]] (n[f[2]] == 1 ? "      " : "    | ") alt "\n"
}
END {
    if (!n["PMI1"] || !n["PMI2"]) {
        print "pg_cmds.awk: no commands found" > "/dev/stderr"
        exit 1
    }
    print "# Generated from wire/pg_cmd.def by parser/pg_cmds.awk: do not edit."
    print "%%{"
    print "machine pg_cmds;"
    printf "pmi1_cmd_name = (\n%s);\n", body["PMI1"]
    printf "pmi2_cmd_name = (\n%s);\n", body["PMI2"]
    print "}%%"
}
