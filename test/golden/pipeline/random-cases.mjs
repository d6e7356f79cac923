// Seeded random cases for the golden vectors (differential testing against Go): plausible pipelines
// over every function family, values from many scripts and number/URL/semver/JSON/duration shapes,
// regexes, printf formats, number-literal syntax, invalid UTF-8, dict merges, and token soup.
// Deterministic: the same seeds always produce the same cases. Imported by cases.mjs.
/* eslint-disable */
function gen1(N, seed) {
  seed = seed || 1;
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const q = (s) => JSON.stringify(s);
  const values = ["", "0", "1", "-1", "42", "3.14", "1e6", "0x1F", "010", "08", "true", "false", "abc", "Hello World", "héllo wörld", "日本語", "ß İ ǅ ﬁ", "  pad  ", "a,b,,c", "a/b/c.txt", "../x/./y", "https://u:p@h.com:8080/p a?q=1#f", "1.2.3", "v1.2.3-rc.1+b", "{\"a\":1,\"b\":[1,2]}", "[1,\"x\",null]", "null", "line1\nline2", "tab\there", "<b>&\"'</b>", "aGVsbG8=", "NBSWY3DP", "90s", "1h30m", "-5", "9223372036854775807", "1_000", "😀 emoji", "\u0000nul", "\x7f", "CamelCaseString", "snake_case_here", "kebab-case-x", "MixedUP lower", "%d %s", "$1", "a.b*c", "1.5e300", "NaN", "Inf"];
  const strs = ["", "a", ",", "x", "é", "%", "-", "_", "abc", "A B", "日", "\\n", "$1", "{}", "<>"];
  const fmts = ["%s", "%d", "%v", "%q", "%x", "%X", "%5s", "%-5s|", "%.2f", "%e", "%g", "%t", "%T", "%c", "%U", "%08.3f", "%+d", "%#v", "%x %X", "%s %s", "%[1]s", "%%", "%v%v", "%6.2v", "%o", "%b", "%#x", "% x", "%.3s", "%q%q", "%!", "%.0f"];
  const res = ["a", "^a", "a$", "[a-z]+", "\\\\d+", "(\\\\w)(\\\\w)", "(?i)A", ".", "x*", "é", "[^a]", "(a|b)+", "\\\\s", "^$", "(?m)^l", "\\\\bw", "[[:upper:]]", "\\\\pL", "(?s).", "a{2}", "b?", "(?P<n>.)", "[é-ü]", "\\\\W+"];
  const S = () => q(pick(strs));
  const N_ = () => String(int(-5, 20));
  const F = () => pick(["0.5", "1.5", "2", "-3", "1e2", "0.1", "3"]);
  const ANY = () => pick([S(), N_(), F(), "nil", "true", "false", "(list 1 \"a\")", "(dict \"k\" 1)", ".", "(int64 3)", "(semver \"1.2.3\")", "(splitList \",\" \"a,b\")"]);
  const stages = [
    () => pick(["upper", "lower", "title", "untitle", "trim", "nospace", "initials", "swapcase", "snakecase", "camelcase", "kebabcase", "quote", "squote", "b64enc", "b64dec", "b32enc", "b32dec", "sha1sum", "sha256sum", "adler32sum", "toJson", "toPrettyJson", "toRawJson", "fromJson", "int", "int64", "float64", "atoi", "add1", "floor", "ceil", "toDecimal", "print", "println", "len", "urlquery", "html", "js", "urlParse", "semver", "base", "dir", "clean", "ext", "isAbs", "durationRound", "duration", "typeOf", "kindOf", "toString", "toStrings", "list", "tuple", "empty", "not", "first", "last", "rest", "initial", "reverse", "uniq", "compact", "sortAlpha", "keys", "values", "deepCopy", "regexQuoteMeta", "mustFromJson", "add1f", "osBase", "osDir", "osClean", "osExt", "fail", "len", "toJson | fromJson"]),
    () => `trunc ${int(-8, 12)}`, () => `substr ${int(-1, 5)} ${int(-1, 9)}`, () => `repeat ${int(0, 3)}`, () => `wrap ${int(0, 8)}`, () => `wrapWith ${int(1, 6)} ${S()}`,
    () => `abbrev ${int(0, 12)}`, () => `abbrevboth ${int(0, 8)} ${int(0, 12)}`, () => `indent ${int(0, 4)}`, () => `nindent ${int(0, 3)}`,
    () => `replace ${S()} ${S()}`, () => `contains ${S()}`, () => `hasPrefix ${S()}`, () => `hasSuffix ${S()}`, () => `trimAll ${S()}`, () => `trimPrefix ${S()}`, () => `trimSuffix ${S()}`,
    () => `splitList ${S()}`, () => `split ${S()}`, () => `splitn ${S()} ${int(-1, 4)}`, () => `join ${S()}`, () => `default ${ANY()}`, () => `coalesce ${ANY()}`,
    () => `add ${ANY()}`, () => `sub ${ANY()}`, () => `mul ${N_()}`, () => `div ${ANY()}`, () => `mod ${N_()}`, () => `max ${ANY()}`, () => `min ${ANY()}`, () => `biggest ${N_()}`,
    () => `addf ${F()}`, () => `subf ${F()}`, () => `mulf ${F()}`, () => `divf ${F()}`, () => `maxf ${F()}`, () => `minf ${F()}`, () => `round ${int(-2, 4)}`,
    () => `printf ${q(pick(fmts))}`, () => `printf ${q(pick(fmts))} ${ANY()}`, () => `print ${ANY()}`, () => `cat ${ANY()}`, () => `list ${ANY()}`, () => `dict ${S()}`,
    () => `regexFind ${q(pick(res))}`, () => `regexMatch ${q(pick(res))}`, () => `regexReplaceAll ${q(pick(res))} ${S()}`, () => `print (regexFindAll ${q(pick(res))} . ${int(-1, 3)})`,
    () => `print (regexReplaceAll ${q(pick(res))} . ${q(pick(["<$1>", "$0", "${1}x", "$1W", "[$n]", "$$", "-"]))})`, () => `print (regexSplit ${q(pick(res))} . ${int(-1, 3)})`,
    () => `semverCompare ${q(pick([">=1.0", "^1.2", "~1.2.3", "<2", "1.x", "*", "!=1.2.3", ">1 <3", "1.0 - 2.0", "<1 || >2"]))}`,
    () => `eq ${ANY()}`, () => `ne ${ANY()}`, () => `lt ${ANY()}`, () => `le ${ANY()}`, () => `gt ${ANY()}`, () => `ge ${ANY()}`, () => `and ${ANY()}`, () => `or ${ANY()}`,
    () => `index ${pick(["(list 1 2 3)", "(dict \"a\" 1)", "\"abc\""])}`, () => `index . ${int(-1, 4)}`, () => `ternary ${ANY()} ${ANY()}`, () => `has ${ANY()}`, () => `chunk ${int(-1, 3)}`,
    () => `without ${ANY()}`, () => `append ${ANY()}`, () => `prepend ${ANY()}`, () => `slice ${ANY()}`, () => `typeIs ${S()}`, () => `kindIs ${q(pick(["string", "slice", "int", "map"]))}`,
    () => `deepEqual ${ANY()}`, () => `seq ${int(-3, 5)}`, () => `until`, () => `get (dict "a" 1 "b" "x")`, () => `hasKey (dict "a" 1)`, () => `set (dict) "k"`, () => `pick (dict "a" 1 "b" 2)`,
    () => `merge (dict "a" 1)`, () => `pluck "a"`, () => `urlJoin`, () => `plural "one" "many"`, () => `mustRegexFind ${q(pick(res))}`,
  ];
  const out = [];
  for (let i = 0; i < N; i++) {
    const n = int(1, 3);
    const ps = [];
    for (let k = 0; k < n; k++) ps.push(pick(stages)());
    out.push({ value: pick(values), pipeline: ps.join(" | ") });
  }
  const seen = new Set();
  return out.filter((c) => { const k = c.value + "\0" + c.pipeline; if (seen.has(k)) return false; seen.add(k); return true; });
}

function gen2(N, seed) {
  seed = seed || 1;
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const q = (s) => JSON.stringify(s);
  const blocks = [[0x20, 0x7e], [0xa0, 0x17f], [0x370, 0x3ff], [0x400, 0x4ff], [0x1e00, 0x1fff], [0x2000, 0x206f], [0x2100, 0x218f], [0x3040, 0x30ff], [0x4e00, 0x4e50], [0xfb00, 0xfb06], [0x1f600, 0x1f64f], [0x0, 0x1f], [0x10400, 0x1044f], [0x1c80, 0x1c88], [0xa640, 0xa69f]];
  const uni = () => { let s = ""; const n = int(0, 12); for (let i = 0; i < n; i++) { const [a, b] = pick(blocks); s += String.fromCodePoint(int(a, b)); } return s; };
  const digits = (n) => { let s = ""; for (let i = 0; i < n; i++) s += String(int(0, 9)); return s; };
  const num = () => pick([
    () => String(int(-1000, 1000)), () => (rnd() * 1e6 - 5e5).toString(), () => (rnd() * 10).toFixed(int(0, 6)), () => `${int(1, 9)}e${int(-30, 30)}`,
    () => "0x" + int(0, 1e6).toString(16), () => "0" + int(0, 777).toString(8), () => "0b" + int(0, 255).toString(2), () => digits(int(1, 25)),
    () => "-" + digits(int(1, 20)), () => "." + digits(3), () => digits(2) + "." , () => String(2 ** int(0, 70)), () => pick(["inf", "-inf", "NaN", "+Inf", "1_000", "0.1", "0.5", "2.5", "1.005", "123456789.123456789"]),
    () => String(rnd() * Number.MAX_VALUE), () => String(rnd() * 1e-300),
  ])();
  const semver = () => pick([() => `${int(0, 3)}.${int(0, 12)}.${int(0, 12)}`, () => `v${int(0, 3)}.${int(0, 3)}`, () => `${int(0, 3)}.${int(0, 3)}.${int(0, 3)}-${pick(["alpha", "beta.1", "rc.2", "0", "01", "x-y"])}`, () => `${int(0, 3)}`, () => `${int(0, 3)}.${int(0, 3)}.${int(0, 3)}+${pick(["b1", "meta.2", "x_y"])}`])();
  const constraint = () => { const op = pick(["", "=", "!=", ">", "<", ">=", "<=", "~", "^", "~>", "=>", "=<"]); const v = pick([() => semver(), () => `${int(0, 3)}.x`, () => "*", () => `${int(0, 3)}.${int(0, 3)}.x`, () => `${int(0,2)}.${int(0,5)}`])(); return pick([op + v, op + " " + v, `${op}${v}, <${int(2, 5)}`, `${op}${v} || ${semver()}`, `${semver()} - ${semver()}`]); };
  const url = () => pick(["http", "https", "ftp", "mailto", "", "HTTP", "git+ssh"]) + pick([":", "://", ":/"]) + pick(["", "user@", "u:p@", "us%20er:p%40@"]) + pick(["host", "h.com", "h.com:80", "[::1]", "[::1]:9", "1.2.3.4:5", "", "a:b:c", "xn--p.com", "h_o"]) + pick(["", "/", "/a/b", "/a%20b", "/ü", "/a b", "//x", "/a;b"]) + pick(["", "?", "?q=1", "?a=b&c=%20", "?x?y"]) + pick(["", "#", "#f", "#f%21", "#a b", "#%zz"]);
  const json = (d = 0) => pick([() => q(uni()), () => String(int(-9, 9)), () => "1.5e3", () => "true", () => "null", () => d < 2 ? "[" + [json(d + 1), json(d + 1)].join(",") + "]" : "[]", () => d < 2 ? `{${q(uni())}:${json(d + 1)},"k":${json(d + 1)}}` : "{}"])();
  const b64 = () => { const a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n! "; let s = ""; const n = int(0, 14); for (let i = 0; i < n; i++) s += pick([...a]); return s; };
  const dur = () => pick([() => `${int(-100, 10000)}${pick(["ns", "us", "µs", "ms", "s", "m", "h"])}`, () => `${int(0, 99)}h${int(0, 59)}m${int(0, 59)}.${digits(int(1, 9))}s`, () => `${(rnd() * 100).toFixed(3)}h`, () => String(int(-1e6, 1e9)), () => pick(["", "0", "1", "h", ".s", "1.h", "+5m", "-0", "9223372036854775807ns"])])();
  const path = () => { let s = pick(["", "/", "./", "../", "a/", "//"]); const n = int(0, 5); for (let i = 0; i < n; i++) s += pick(["a", "..", ".", "b.txt", "", "c.tar.gz", ".hid"]) + pick(["/", "", "//"]); return s; };
  const gens = [
    [uni, ["upper", "lower", "title", "untitle", "swapcase", "snakecase", "camelcase", "kebabcase", "nospace", "initials", "quote", "squote", "toJson", "toRawJson", "trim", "len", "b64enc", "b32enc", "sha1sum", "adler32sum", "html", "js", "urlquery", "printf \"%q\"", "printf \"%+q\"", "printf \"%x\"", "printf \"% X\"", "printf \"%.3s|%5.2q\"", "printf \"%#q\"", "printf \"%U\" (len .)", "trunc 3", "trunc -3", "abbrev 5", "wrap 3", "wrapWith 2 \"|\"", "splitList \"\" | len", "regexFindAll \".\" -1 | len", "print (regexReplaceAll \"\\\\w\" . \"_\")", "print (regexReplaceAll \"(?i)[a-zé]\" . \"*\")", "print (regexFindAll \"\\\\pL+\" . -1)", "print (regexFindAll \"[[:punct:]]\" . -1)", "print (regexFindAll \"(?i)σ|k\" . -1)", "print (regexFind \"\\\\S+\" .)", "print (regexSplit \"\\\\s+\" . -1)", "indent 2", "replace \"\" \"-\"", "title | swapcase", "trimAll \"aé \"", "toString | upper | lower", "printf \"%c\" (len .)", "printf \"%-8s|%8s\" .", "printf \"%.2x\"", "repeat 2 | trunc 5"]],
    [num, ["int", "int64", "float64", "atoi", "add 0", "add1", "mul 2", "sub 1", "div 3", "mod 7", "max 5", "min 5", "add1f", "addf 0.1", "subf 1", "mulf 1.5", "divf 3", "maxf 0", "minf 0", "floor", "ceil", "round 2", "round 0", "round 1 0.3", "toDecimal", "float64 | printf \"%v|%g|%e|%.3f|%G|%.10g|%x\"", "float64 | printf \"%6.2f|%-10.3e|%+.1f|%08.2f|% f\"", "float64 | printf \"%b\"", "int64 | printf \"%d|%x|%o|%b|%c|%q|%U|%08d|%+d|%x\"", "float64 | toJson", "int | toJson", "float64 | int", "duration", "durationRound", "float64 | print", "printf \"%v\" (float64 .)", "float64 | mul 1", "float64 | round 3"]],
    [semver, ["semver", "semver | printf \"%v %s\"", "semver | toJson", "(semver .).Major", "(semver .).Prerelease", "(semver .).IncMinor", "(semver .).IncPatch", "print (semver .).Original", ...Array.from({ length: 10 }, () => `semverCompare ${q(constraint())}`)]],
    [url, ["urlParse", "urlParse | toJson", "urlParse | urlJoin", "urlquery", "(urlParse .).host", "(urlParse .).hostname", "(urlParse .).path", "(urlParse .).userinfo"]],
    [json, ["fromJson", "fromJson | toJson", "fromJson | toPrettyJson", "mustFromJson | typeOf", "fromJson | kindOf", "fromJson | print", "fromJson | printf \"%v %T\"", "fromJson | toRawJson", "fromJson | deepCopy | toJson", "fromJson | empty", "fromJson | len"]],
    [b64, ["b64dec", "b32dec", "b64dec | b64enc", "b64dec | len", "b32dec | len", "quote"]],
    [dur, ["durationRound", "duration"]],
    [path, ["base", "dir", "clean", "ext", "isAbs", "osBase", "osDir", "osClean"]],
  ];
  const out = [];
  for (let i = 0; i < N; i++) { const [g, ps] = pick(gens); out.push({ value: g(), pipeline: pick(ps) }); }
  const seen = new Set();
  return out.filter((c) => { const k = c.value + "\0" + c.pipeline; if (seen.has(k)) return false; seen.add(k); return true; });
}

function gen3(N, seed) {
  seed = seed || 1;
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const q = (s) => JSON.stringify(s);
  // random regex
  const atoms = ["a", "b", "é", ".", "\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "[abc]", "[^a]", "[a-cx-z]", "[[:alpha:]]", "[[:^digit:]]", "\\pL", "\\p{Greek}", "\\PL", "\\x41", "\\x{e9}", "\\101", "\\.", "\\*", "\\\\", "^", "$", "\\b", "\\B", "\\A", "\\z", "(a)", "(?:ab)", "(?P<g>b)", "(?i)", "(?-i)", "(?s)", "(?m)", "(?U)", "(?i:k)", "[\\d\\s]", "[^\\W_]", "\\Qa.b\\E", "[é-ü]", "[]a]", "[a-]", "{", "}", "]", "(", ")", "|", "\\n", "\\t", "[\\p{Lu}]", "\\C", "\\e", "(?=a)", "\\1", "a**", "x{2,1}", "[z-a]", "\\p{Foo}", "(?P<1a>x)", "[[:word:]]", "\\pN", "(?is)a.", "\\x{110000}"];
  const quants = ["", "", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,}", "{0,2}", "{,3}", "{2}?"];
  const regex = () => { let s = ""; const n = int(1, 5); for (let i = 0; i < n; i++) s += pick(atoms) + pick(quants); return s; };
  const subj = () => pick(["", "abc", "aAbBcC", "héllo wörld", "ΣΑΣ σας", "kK\u212aſsS", "a\nb\nc", "123 abc 456", "a.b*c\\d", "xyzzy", "ab ab ab", "\u0085\u00a0 \t", "日本語abc", "AAA", "a\r\nb"]);
  // printf
  const verbs = ["v", "+v", "#v", "T", "t", "b", "c", "d", "o", "O", "q", "x", "X", "U", "#U", "e", "E", "f", "F", "g", "G", "s", "%", "w", "z", "!"];
  const flags = ["", "", "-", "+", "#", " ", "0", "-0", "+ ", "#0"];
  const fmt = () => { let s = pick(["", "x", "é"]); const n = int(1, 3); for (let i = 0; i < n; i++) s += "%" + pick(flags) + pick(["", "", "5", "08", "*", "[1]", "[3]"]) + pick(["", "", ".2", ".0", ".*", "."]) + pick(verbs) + pick(["", " ", "|"]); return s; };
  const arg = () => pick(["1", "-7", "255", "0", "3.14159", "-0.5", "1e21", "1e-7", "'x'", "\"str\"", "\"日本\"", "true", "nil", "(list 1 \"a\" nil)", "(dict \"k\" 1)", "(int64 -3)", "(semver \"1.2.3\")", "(float64 \"NaN\")", "(float64 \"-Inf\")", "(splitList \",\" \"a,b\")", "1i", "(uniq (list 1))", "(atoi \"65\")", "(until 3)", "(split \",\" \"a\")", ".", "(toDecimal \"17\")", "(len \"abc\")"]);
  // literal syntax
  const lit = () => pick(["1", "-1", "+1", "0x1f", "0X1F", "0o17", "0O17", "0b11", "017", "08", "0_1", "1_000", "1__0", "_1", "1_", "0x_1", "1.", ".5", "1.5e3", "1e", "1e+", "0x1p-2", "0x1.8p1", "0x1p", "1i", "0i", "1.5i", "1+2i", "1-0i", "'a'", "'\\n'", "'\\x41'", "'\\u00e9'", "'é'", "''", "'ab'", "'\\''", "'\"'", "'\\\"'", "\"\\a\\b\\f\\v\"", "\"\\x7f\\377\"", "\"\\400\"", "\"\\u0041\\U0001F600\"", "\"\\ud800\"", "`a\\nb`", "`x\r\ny`", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615", "18446744073709551616", "1e308", "1e309", "-0", "-0.0", "0x", "0b", "00", "07.5", "09.5", "1E2", "0x1E", "-0x1E", "true", "false", "nil"]);
  const cmds = [
    () => `printf ${q(fmt())} ${arg()} ${arg()}`, () => `printf ${q(fmt())} ${arg()}`, () => `printf ${q(fmt())}`,
    () => `print (regexFindAll ${q(regex())} ${q(subj())} -1)`, () => `print (regexReplaceAll ${q(regex())} ${q(subj())} ${q(pick(["<$0>", "$1", "${g}", "$g-", "x"]))})`, () => `print (regexSplit ${q(regex())} ${q(subj())} -1)`, () => `regexFind ${q(regex())}`, () => `print (mustRegexMatch ${q(regex())} ${q(subj())})`,
    () => `print ${lit()}`, () => `printf "%v %T" ${lit()} ${lit()}`, () => `print ${lit()} ${lit()} ${lit()}`, () => `trunc ${lit()}`, () => `add ${lit()}`, () => `printf "%v" (add1f ${lit()})`, () => `round ${lit()} ${lit()}`,
    () => `print (${pick(["list", "dict", "tuple"])} ${arg()} ${arg()}).${pick(["k", "x", "Major"])}`, () => `print (${pick(["$x := ", "$y := ", ""])}upper .) ${pick(["$x", "$", "$y", "."])}`, () => `print ($x := 1) ($x = 2) $x`, () => `print (semver "1.2.3").${pick(["Major", "Minor", "String", "Original", "IncMajor", "major", "IncPatch.String", "IncPatch.Original", "Nope"])}`,
    () => `print ${pick(["$", "$.", "$.x", ".x", "(.)", "((.))", "(print . | upper)", "(upper . | lower)"])}`, () => `${pick(["eq", "ne", "lt", "le", "gt", "ge"])} ${arg()} ${arg()}`, () => `print (${pick(["and", "or"])} ${arg()} ${arg()})`, () => `print (index ${arg()} ${arg()})`, () => `print (len ${arg()})`, () => `print (not ${arg()})`,
    () => `${pick(["html", "js", "urlquery", "print", "println"])} ${arg()} ${arg()}`,
  ];
  const out = [];
  for (let i = 0; i < N; i++) out.push({ value: subj(), pipeline: pick(cmds)() });
  const seen = new Set();
  return out.filter((c) => { const k = c.value + "\0" + c.pipeline; if (c.pipeline.includes("}") && !/"[^"]*}[^"]*"/.test(c.pipeline)) return false; if (seen.has(k)) return false; seen.add(k); return true; });
}

function gen4(N, seed) {
  seed = seed || 1;
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const q = (s) => JSON.stringify(s);
  const bad = () => pick(["\"\\xff\"", "\"a\\xe6\\x97\"", "\"\\xc3\"", "\"\\xed\\xa0\\x80\"", "\"\\xf4\\x90\\x80\\x80\"", "\"\\xe2\\x82\"", "(trunc 2 \"日本\")", "(trunc -1 \"é\")", "(b64dec \"/w==\")", "(b64dec \"w6nDqQ==\")", "(substr 1 3 \"日本\")", "\"ok\"", "\"\\u00e9\\xff\""]);
  const sfn = ["upper", "lower", "title", "untitle", "swapcase", "snakecase", "camelcase", "kebabcase", "nospace", "initials", "quote", "squote", "toJson", "toRawJson", "trim", "len", "b64enc", "b32enc", "sha1sum", "adler32sum", "html", "js", "urlquery", "trunc 2", "abbrev 4", "wrap 2", "indent 1", "splitList \"\"", "splitList \"\\xff\"", "trimAll \"\\xff\"", "replace \"\" \"|\"", "regexQuoteMeta", "printf \"%q|%x|%s|%v|%+q|%#q|%.1s|%5.2s\"", "toStrings", "print", "urlParse", "semver", "base", "clean", "fromJson", "toString", "regexFind \".\"", "regexFind \"\\xff\"", "cat", "list", "typeOf", "durationRound", "int", "float64", "atoi", "b64dec", "b32dec", "contains \"\\xff\"", "hasPrefix \"\\xe6\"", "repeat 2", "printf \"%c%U\" 0xFFFD 0xFFFD", "printf \"%q\" (list \"\\xff\")", "index . 0"];
  const dictv = (d = 0) => pick([() => q(pick(["", "a", "x"])), () => String(int(-2, 3)), () => "nil", () => "true", () => "false", () => "(list)", () => `(list ${int(0, 2)})`, () => d < 2 ? `(dict ${q(pick(["a", "b", "c"]))} ${dictv(d + 1)} ${q(pick(["a", "b"]))} ${dictv(d + 1)})` : "(dict)", () => "(splitList \",\" \"a,b\")", () => "(semver \"1.2.3\")", () => "(split \",\" \"a\")"])();
  const dict = () => `(dict ${q(pick(["a", "b", "c"]))} ${dictv()} ${q(pick(["a", "b", "c"]))} ${dictv()})`;
  const num = () => pick(["1", "-1", "0", "9223372036854775807", "-9223372036854775808", "(int64 5)", "2.5", "-2.5", "1e300", "\"12\"", "\"0x10\"", "\"1.5\"", "\"abc\"", "true", "nil", "(atoi \"7\")", "(float64 \"1e-320\")", "(float64 \"NaN\")", "(float64 \"+Inf\")", "(list 1)", "'a'", "(toDecimal \"777\")", "(len \"abc\")", "(semver \"1.2.3\").Major"]);
  const cmds = [
    () => `print (${pick(sfn)} ${bad()})`, () => `${pick(sfn)} | print ${bad()}`,
    () => `print (${pick(["merge", "mergeOverwrite", "mustMerge", "mustMergeOverwrite"])} ${dict()} ${dict()} | toJson)`, () => `print (${pick(["merge", "mergeOverwrite"])} ${dict()} ${dict()} ${dict()})`,
    () => `print (deepCopy ${dict()} | toJson)`, () => `print (${dict()} | toPrettyJson)`, () => `print (dig "a" "b" "def" ${dict()})`, () => `print (pick ${dict()} "a" "c")`, () => `print (omit ${dict()} "a")`, () => `print (keys ${dict()} | sortAlpha)`, () => `print (${dict()}).a`, () => `print (get ${dict()} "a")`, () => `print (pluck "a" ${dict()} ${dict()})`, () => `print (values (dict "a" ${dictv()}))`, () => `print (urlJoin ${dict()})`, () => `print (hasKey ${dict()} "b")`, () => `print (empty ${dict()})`, () => `print (${dict()} | deepEqual ${dict()})`,
    () => `print (${pick(["add", "sub", "mul", "div", "mod", "max", "min", "biggest", "addf", "subf", "mulf", "divf", "maxf", "minf"])} ${num()} ${num()})`, () => `print (${pick(["add1", "add1f", "floor", "ceil", "int", "int64", "float64", "toDecimal", "duration", "durationRound"])} ${num()})`, () => `print (round ${num()} ${int(-3, 5)})`, () => `print (${pick(["eq", "ne", "lt", "le", "gt", "ge"])} ${num()} ${num()})`, () => `printf "%v %T" (${pick(["add", "mul", "addf", "max"])} ${num()} ${num()} ${num()})`,
    () => `print (${pick(["list", "tuple"])} ${dictv()} ${dictv()} | ${pick(["uniq", "compact", "reverse", "first", "last", "rest", "initial", "toJson", "sortAlpha", "toStrings", "len"])})`, () => `print (has ${dictv()} (list ${dictv()} ${dictv()}))`, () => `print (without (list ${dictv()} ${dictv()}) ${dictv()})`, () => `print (concat (list ${dictv()}) ${pick(["(list 1)", "(splitList \",\" \"a\")", "(until 2)", "(list)"])})`, () => `print (slice (list 1 2 3 4) ${int(0, 4)} ${int(0, 4)})`, () => `print (chunk ${int(1, 3)} (list 1 2 3 4 5))`,
  ];
  const out = [];
  for (let i = 0; i < N; i++) out.push({ value: pick(["v", "", "é"]), pipeline: pick(cmds)() });
  const seen = new Set();
  return out.filter((c) => { const k = c.value + "\0" + c.pipeline; if (seen.has(k)) return false; seen.add(k); return true; });
}

function gen5(N, seed) {
  seed = seed || 1;
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const toks = ["upper", "lower", "print", "printf", "len", "list", "dict", "index", "eq", "and", "or", "not", "default", "trunc", "add", "quote", "toJson", "first", "semver", "splitList", "join", "slice", "call", "html",
    "|", "|", "(", ")", "(", ")", ".", "$", "$x", "$y", ":=", "=", ",", "nil", "true", "false", ".a", ".Major", ".b.c", "$.x", "$x.y", "-", "+", "'", "\"", "`", "1", "-2", "3.5", "0x10", "'a'", "\"s\"", "\"%v\"", "\"%d %s\"", "`r`", "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue", "#", "@", "/", "*", "!", "?", "[", "]", "{", ";", "~", "^", "&", "<", ">", "\\", "é", "日本", "_x", "x_1", "1a", "a1", "\t", "\n", "  ", ""];
  const glue = () => pick([" ", " ", " ", "", "  ", "\n"]);
  const out = [];
  for (let i = 0; i < N; i++) {
    let s = "";
    const n = int(0, 8);
    for (let k = 0; k < n; k++) s += pick(toks) + glue();
    out.push({ value: pick(["v", "", "1.2.3", "a,b"]), pipeline: s });
  }
  const seen = new Set();
  return out.filter((c) => { const k = c.value + "\0" + c.pipeline; if (seen.has(k)) return false; seen.add(k); return true; });
}

export function randomCases() {
  return [...gen1(400, 101), ...gen2(500, 202), ...gen3(500, 303), ...gen4(400, 404), ...gen5(400, 505)];
}
