// Source of cases.json (the inputs of the golden vectors). Regenerate both files from this directory:
//
//   node cases.mjs > cases.json && go run . vectors
//
// Hand-written cases first (by function family and by the pitfalls listed in
// docs/spec pipeline-functions.md), then seeded random cases from random-cases.mjs.
//
// Each case is [value, pipeline] or [value, pipeline, errorContains] (errorContains must occur in Go's error).
import { randomCases } from "./random-cases.mjs";

const C = [];
const add = (value, pipeline, errorContains) => C.push(errorContains ? { value, pipeline, errorContains } : { value, pipeline });
const each = (values, pipeline) => values.forEach((v) => add(v, pipeline));
const pipes = (value, list) => list.forEach((p) => add(value, p));
// A standalone expression (the value is not used): rendered through print so the value is not appended.
const std = (list, value = "x") => list.forEach((e) => add(value, `print (${e})`));
const sx = (expr, errorContains, value = "x") => add(value, `print (${expr})`, errorContains);

const MB = "héllo wörld"; // multibyte
const CJK = "日本語テキスト";

// ---- syntax and template semantics -----------------------------------------------------------
pipes("value", [
  "",
  "upper | lower",
  "  upper  ",
  "upper|lower",
  "print",
  "print .",
  "print $",
  "printf \"%s-%s\" .",
  "printf `%s` ",
  "printf \"%s\" \"\\x41\\u00e9\\U0001F600\\101\\t\"",
  "printf \"%s\" `raw\\n`",
  "printf \"%v %v %v\" 'a' '\\n' '\\''",
  "printf \"%v\" 1_000_000",
  "printf \"%v %v %v %v\" 0x1F 0o17 0b101 017",
  "printf \"%v %v\" 1.5 -2.25",
  "printf \"%v %v %v\" 1e3 1E-3 0x1p4",
  "printf \"%T %T %T %T %T\" 1 1.0 'x' \"s\" true",
  "printf \"%T\" 1i",
  "printf \"%v\" 1+2i",
  "printf \"%v\" -0x1E",
  "printf \"%T\" -0x1E",
  "printf \"%v\" .5",
  "printf \"%v\" +5",
  "printf \"%v %v\" true false",
  "printf \"%v\" nil",
  "upper | printf \"[%s]\"",
  "(upper)",
  "print (upper .) (lower .)",
  "print (print (print (upper .)))",
  "print ($x := upper .) $x",
  "print (\"a\" | upper)",
  "print (list 1 2 | len)",
  "len",
  "print (len .)",
])
add("x", "upper |");
add("x", "| upper", "unexpected");
add("x", "upper | | lower", "unexpected");
add("x", "(upper", "unclosed");
add("x", "upper)", "unexpected");
add("x", "\"abc", "unterminated");
add("x", "'ab'", "malformed character constant");
add("x", "printf \"%v\" 08", "");
add("x", "printf \"%v\" 1x", "bad number syntax");
add("x", "printf \"%v\" 99999999999999999999", "overflow");
add("x", "\"lit\"", "non executable command");
add("x", "5", "non executable command");
add("x", "nil", "non executable command");
add("x", ".", "non executable command");
add("x", "true", "non executable command");
add("x", "undefinedfn", "function \"undefinedfn\" not defined");
add("x", "print $nope", "undefined variable");
add("x", ".Field", "can't evaluate field Field in type string");
add("x", "print .Field", "can't evaluate field Field");
add("x", "upper 1", "wrong number of args for upper: want 1 got 2");
add("x", "trunc \"3\"", "expected integer; found \"3\"");
add("x", "trunc 1.5", "expected integer; found 1.5");
add("x", "print nil | upper", "");
add("x", "if", "unexpected <if>");
add("x", "print , x", "unexpected");
add("x", "print \"a\".b", "unexpected . after term");
add("x", "list | upper", "wrong type for value; expected string; got []interface {}");
add("x", "(list).x", "");
add("x", "(dict \"a\" \"b\").a", "");
add("x", "(dict \"a\" (dict \"b\" \"c\")).a.b", "");
add("x", "print (dict \"a\" \"b\").missing", "");
add("x", "(dict \"a\" \"b\").a 1", "is not a method but has arguments");
add("x", "print (nil).x", "");
add("x", "call", "");
add("x", "print 1 | 2", "non executable command");
add("x", "printf \"%d\" 9223372036854775807", "");
add("x", "printf \"%d\" 9223372036854775808", "overflows int");
add("x", "printf \"%v\" 18446744073709551616", "");
add("x", "printf \"%c\" 0x1F600", "");
add("x", "printf \"%v\" 1e400", "");

// ---- output rendering ------------------------------------------------------------------------
pipes("v", ["list", "list 1 \"a\" nil true 2.5", "dict", "dict \"n\"", "float64", "float64 | printf \"%v\"", "print 1.0", "print 1e-7",
  "print 3.0 4.5", "print 1 2 \"a\" \"b\" 3", "println 1 \"a\"", "print nil", "print (list nil)", "list (dict \"a\" 1) (list)", "tuple 1 2",
  "splitList \"\"", "index (dict \"a\" 1)", "dict \"k\" | toJson"]);
std([
  "dict \"b\" 2 \"a\" 1 \"c\" (list 1 2)",
  "dict \"n\" nil",
  "first (list)",
  "list 1.0 2.5 1e6 1e21 1e-5 0.0001 100000.0 123456789.0 -0.0",
  "semver \"1.2.3-rc.1+b5\"",
  "split \",\" \"a,b,c,d,e,f,g,h,i,j,k,l\"",
]);
add("1.2.3-rc.1+b5", "semver");
add("v2", "semver | printf \"%v %s\"");
add("a,b,c,d,e,f,g,h,i,j,k,l", "split \",\"");
add("zz", "index (dict \"a\" 1)");
add("null", "fromJson");

// ---- printf / fmt ----------------------------------------------------------------------------
pipes("5", [
  "printf \"%d\"",
  "printf \"%s %d\"",
  "printf \"%s\" 1 2",
  "printf \"%[2]s %[1]s\" \"a\"",
  "printf \"%[3]s\"",
  "printf \"%!\"",
  "printf \"%\"",
  "printf \"%%\"",
  "printf \"%5s|%-5s|\" \"ab\"",
  "printf \"%05d|%+d|% d|%x|%X|%o|%O|%b|%#x|%#o\" 42 42 42 255 255 8 8 5 255",
  "printf \"%8.3f|%-8.2f|%e|%E|%g|%G\" 3.14159 2.5 123456.789 0.000123 100000000.0 1e-10",
  "printf \"%.0f %.0f %.0f %.0f\" 0.5 1.5 2.5 3.5",
  "printf \"%.2f %.1f %.3f\" 2.675 0.05 1.0005",
  "printf \"%v %v %v\" 0.1 0.2 0.30000000000000004",
  "printf \"%g %g %g\" 1e20 1e21 123456789.0",
  "printf \"%.3g %.10g %#g\" 1234.5678 1.0 1.0",
  "printf \"%x %X\" 1.5 -0.75",
  "printf \"%b\" 1.0",
  "printf \"%6.2v|\" 3.14159",
  "printf \"%t %t\" true false",
  "printf \"%t\" 1",
  "printf \"%q %q %+q %#q\" \"héllo\" \"tab\\there\" \"日本\" \"back`tick\"",
  "printf \"%q\" 65",
  "printf \"%c %c %U %#U\" 65 0x263A 0x263A 0x263A",
  "printf \"%x % x %#x %X\" \"hi!\" \"hi!\" \"hi!\" \"ÿ\"",
  "printf \"%10.3s|\" \"abcdef\"",
  "printf \"%.2s\" \"日本語\"",
  "printf \"%v %+v %#v\" (list 1 \"a\")",
  "printf \"%#v\" (dict \"a\" 1 \"b\" \"x\")",
  "printf \"%#v %#v %#v\" 1 \"s\" 2.0",
  "printf \"%v %d %s\" (list 1 2) (list 1 2) (list \"a\" \"b\")",
  "printf \"%s\" (list 1 \"a\")",
  "printf \"%d\" (dict \"a\" 1)",
  "printf \"%T %T %T\" (list) (dict) (splitList \",\" \"a\")",
  "printf \"%v\" (semver \"1.2.3\")",
  "printf \"%d\" (semver \"1.2.3\")",
  "printf \"%*d|%-*d|\" 5 1 5 2",
  "printf \"%.*f\" 2 3.14159",
  "printf \"%d %d\" (int64 3) (add 1 2)",
  "printf \"%5.1f%%\" 99.5",
  "printf \"%v\" (add 1 2) \"extra\" nil",
  "printf \"%s %v\" nil nil",
  "printf \"%d\" nil",
  "printf \"%x\" -255",
  "printf \"%08.3f|%-08d|%+08d\" -3.14159 5 5",
  "printf \"%v %v\" (float64 \"NaN\") (float64 \"-Inf\")",
  "printf \"%5.1f|%05.1f\" (float64 \"+Inf\") (float64 \"NaN\")",
])

// ---- strings ----------------------------------------------------------------------------------
each(["Hello World", MB, "", "ÄÖÜ straße ǆ ﬁ İ ǰ", "ß", "ΣΑΣ σας", "ǅungla"], "upper");
each(["Hello World", MB, "ÄÖÜ İSTANBUL ǅ", "ΣΑΣ"], "lower");
each(["hello wide_world-x", "élan vital", "o'neil mc-donald", "ǆemal", "ß ŉ", "123abc def"], "title");
each(["Hello World", "ÉLAN Vital", "  Two  Spaces"], "untitle");
each(["Hello World", "hELLO wORLD", "Élan ǅ ǆ", "a1 B2"], "swapcase");
each(["  padded\t\n", "\u00a0nbsp\u00a0", "\u3000ideographic\u3000", "\u0085x\u0085", "none"], "trim");
add("xxhixx", "trimAll \"x\"");
add("¡¡hola!!", "trimAll \"¡!\"");
add("--a--", "trimall \"-\"");
add("prefix-body", "trimPrefix \"prefix-\"");
add("body.txt", "trimSuffix \".txt\"");
add("body.txt", "trimSuffix \"\"");
each(["hello world", MB, "abc"], "trunc 5");
each(["hello world", MB, "abc", "日本"], "trunc -4");
pipes(MB, ["trunc 2", "trunc 0", "trunc 100", "trunc -100", "trunc -1"]);
add(CJK, "trunc 4");
add(CJK, "trunc 4 | len");
pipes("hello world", ["substr 0 5", "substr 6 100", "substr -1 3", "substr 3 -1", "substr 3 3"]);
add("hello", "substr 4 2", "slice bounds out of range");
add("hello", "substr -1 10", "slice bounds out of range");
add("hello", "substr 9 -1", "slice bounds out of range");
add(MB, "substr 1 3");
pipes("ab", ["repeat 3", "repeat 0"]);
add("ab", "repeat -1", "negative Repeat count");
pipes("The quick brown fox", ["abbrev 10", "abbrev 3", "abbrev 50", "abbrevboth 5 10", "abbrevboth 0 8", "abbrevboth 10 6"]);
add("a b\tc\nd\u00a0e", "nospace");
add("héllo wörld", "nospace");
add("abc", "nospace");
each(["John Ronald Reuel", "élan vital", "  x  y"], "initials");
each(["HelloWorld", "helloWorld", "hello world", "XMLHttpRequest", "already_snake", "Version2Alpha", "a1B2c3", "HTTP2Server", "ÉclairÜber"], "snakecase");
each(["hello_world", "hello-world", "hello world", "Hello", "_leading", "a__b", "x", "élan vital", "HTTP_server"], "camelcase");
each(["HelloWorld", "hello_world", "Some Title Here", "ID123ABC"], "kebabcase");
pipes("The quick brown fox jumps over the lazy dog", ["wrap 10", "wrap 1", "wrapWith 10 \"<br>\"", "wrapWith 4 \"|\""]);
add("supercalifragilistic word", "wrap 5");
add("supercalifragilistic word", "wrapWith 5 \"\\n\"");
pipes("foobar", ["contains \"oba\"", "contains \"x\"", "hasPrefix \"foo\"", "hasPrefix \"bar\"", "hasSuffix \"bar\"", "hasSuffix \"\""]);
each(["plain", "with \"quotes\" and \\ backslash", "tab\tnewline\n", "héllo 日本", "\u0007bell \u007f del", "\ufeffbom", "emoji 😀"], "quote");
pipes("x", ["quote 1 2.5 nil true", "quote", "squote 1 nil \"a\"", "squote"]);
each(["it's", "é"], "squote");
pipes("x", ["cat \"a\" 1 nil (list 1 2)", "cat", "cat nil"]);
each(["line1\nline2", "", "single"], "indent 2");
each(["line1\nline2", ""], "nindent 4");
add("x", "indent -1", "negative Repeat count");
pipes("a-b-c", ["replace \"-\" \"+\"", "replace \"\" \"_\"", "replace \"x\" \"y\""]);
add(MB, "replace \"\" \"|\"");
std(["plural \"one\" \"many\" 1", "plural \"one\" \"many\" 2", "plural \"one\" \"many\" 0"]);
add("1", "atoi | plural \"one\" \"many\"", "");
pipes("a/b/c", ["split \"/\"", "split \"\"", "splitList \"/\"", "splitList \"\"", "splitn \"/\" 2", "splitn \"/\" 0", "splitn \"/\" -1", "splitList \"x\""]);
add("", "splitList \",\"");
add("", "splitList \"\"");
add(MB, "splitList \"\"");
add("a,b", "split \",\" | toJson");
std([
  "list 3 1 2 | toStrings",
  "list 1 nil \"a\" | toStrings | toJson",
  "list \"c\" \"a\" \"B\" \"b\" | sortAlpha",
  "list 10 9 100 | sortAlpha",
  "list \"a\" 1 nil | join \",\"",
  "splitList \",\" \"x,y\" | join \"+\"",
  "list | join \",\"",
  "list 1 2 | toString",
  "toString 1.5",
  "toString nil",
  "semver \"1.0.0\" | toString",
  "sortAlpha nil",
  "hello",
]);
pipes("x", ["toStrings", "sortAlpha", "join \"-\"", "toString"]);
add("x", "hello");
add("x", "hello 1", "wrong number of args");

// ---- conversions and math ------------------------------------------------------------------------
each(["42", "-7", "010", "0x1F", "0b101", "0o17", "08", "1_000", "1.0", "1.50", "10.00", "abc", "", " 5", "9223372036854775807", "9223372036854775808", "1e3", ".0", "+3"], "int");
each(["42", "010", "0x1F", "08", "1.0", "abc", "-0"], "int64");
each(["1.5", "010", "1e3", "0x1p4", "inf", "-Infinity", "nan", "1_000.5", "abc", "1e400", ".5", "5."], "float64");
each(["42", "010", "0x1F", "08", "-3", "+3", "abc", "99999999999999999999", " 1", "1_000"], "atoi");
std(["int 3.9", "int -3.9", "int true", "int nil", "int (list)", "int64 2.5", "float64 3", "float64 true", "int 1e19"]);
pipes("7", ["add1", "add 1 2", "sub 10", "mul 3 2", "div 20", "mod 23", "max 3 10", "min 3 10", "biggest 1 100"]);
std([
  "add",
  "add 1 \"2\" 3.7 true nil",
  "sub 1 2",
  "div 7 2",
  "div -7 2",
  "mod -7 3",
  "mul 9223372036854775807 2",
  "add 9223372036854775807 1",
  "max 1 (list 5)",
  "min \"x\" 5",
  "add1f 1.5",
  "addf 1.1 2.2",
  "addf 0.1 0.2",
  "subf 10 0.3 0.2",
  "mulf 1.1 1.1",
  "divf 10 3",
  "divf 1 3 3",
  "divf 2 3",
  "divf -2 3",
  "maxf 1 2.5 -3",
  "minf 1 2.5 -3",
  "maxf \"x\" 2",
  "ceil 1.1",
  "ceil -1.1",
  "floor 1.9",
  "floor -1.1",
  "floor \"2.7\"",
  "round 3.14159 2",
  "round 2.5 0",
  "round -2.5 0",
  "round 1.255 2",
  "round 1234.5 -2",
  "round 2.45 1 0.4",
  "round \"7.777\" 1",
  "toDecimal \"0777\"",
  "toDecimal \"777\"",
  "toDecimal 777",
  "toDecimal \"89\"",
  "seq 5",
  "seq -3",
  "seq 0",
  "seq 2 5",
  "seq 5 2",
  "seq 1 2 10",
  "seq 10 -3 1",
  "seq 10 3 1",
  "seq",
  "seq 1 2 3 4",
  "until 5",
  "until -3",
  "until 0",
  "untilStep 0 10 3",
  "untilStep 10 0 -4",
  "untilStep 0 10 0",
  "untilStep 0 10 -1",
  "len (until 4)",
]);
sx("div 1 0", "integer divide by zero");
sx("mod 1 0", "integer divide by zero");
sx("divf 1 0", "division by 0");
add("3", "until", "wrong type for value; expected int; got string");
sx("addf (float64 \"NaN\")", "Cannot create a Decimal from NaN");

// ---- defaults / flow ------------------------------------------------------------------------
each(["", "0", "false", " ", "x"], "default \"fallback\"");
std([
  "default \"d\" 0",
  "default \"d\" 0.0",
  "default \"d\" false",
  "default \"d\" nil",
  "default \"d\" (list)",
  "default \"d\" (dict)",
  "default \"d\" (list 0)",
  "default \"d\" 1",
  "default \"d\"",
]);
each(["", "0", "false", "x"], "empty");
std([
  "empty 0",
  "empty 0.0",
  "empty nil",
  "empty (list)",
  "empty (dict \"a\" 1)",
  "empty false",
  "empty (semver \"1.0.0\")",
  "coalesce \"\" 0 nil \"first\" \"second\"",
  "coalesce \"\" 0",
  "coalesce",
  "all 1 \"a\" true",
  "all 1 \"\" true",
  "all",
  "any 0 \"\" nil",
  "any 0 \"x\"",
  "any",
  "list 0 1 \"\" \"a\" nil false (list) | compact",
  "mustCompact (list \"\" \"x\")",
  "ternary \"yes\" \"no\" true",
  "ternary \"yes\" \"no\" false",
  "eq . \"x\" | ternary \"same\" \"different\"",
]);
sx("ternary \"a\" \"b\" 1", "expected bool");
add("x", "ternary \"a\" \"b\"", "wrong type for value; expected bool; got string");
add("x", "compact", "Cannot compact on type string");
add("boom", "(fail \"literal message\") | print", "literal message");
add("boom", "fail", "");
add("x", "print (fail \"nope\")", "nope");

// ---- JSON ----------------------------------------------------------------------------------------
each(["plain", "<a href=\"x\">&</a>", "tab\tnl\n\u0001\u001f", "unicode é 😀 \u2028 \u2029", "back\\slash", "\b\f"], "toJson");
each(["<a>&</a>", "\u2028"], "toRawJson");
std([
  "dict \"b\" 1 \"a\" (list 1 2.5 \"s\" nil true) | toJson",
  "dict \"b\" 1 \"a\" (list 1 2.5 \"s\" nil true) | toPrettyJson",
  "dict \"z\" (dict) \"y\" (list) | toPrettyJson",
  "list | toPrettyJson",
  "toJson nil",
  "toJson 1e21",
  "toJson 1e-7",
  "toJson 0.000001",
  "toJson 100000000000000000000.0",
  "toJson 1.5",
  "toJson -0.0",
  "toJson (float64 \"NaN\")",
  "mustToJson (float64 \"NaN\")",
  "toJson (rest (list))",
  "toJson (concat)",
  "toJson (semver \"1.2.3\")",
  "toJson (splitList \",\" \"a,b\")",
  "toJson (until 3)",
  "toJson 1i",
  "toRawJson (dict \"<\" \">\")",
  "mustToRawJson (list \"&\")",
  "mustToPrettyJson (dict \"a\" 1)",
  "toPrettyJson \"s\"",
]);
sx("mustToJson 1i", "unsupported type");
each(["{\"b\":1,\"a\":[1,2.5,\"x\",null,true]}", "[1,2,3]", "\"str\"", "42", "1.5e3", "null", "true", "", "{bad", "{\"a\":1}x", " {\"a\" : 1 } ", "12345678901234567890", "{\"a\":{\"b\":{\"c\":1}}}", "[]", "{}", "\"\\u00e9\\ud83d\\ude00\"", "1e400"], "fromJson");
each(["{\"a\":1}", "[1,\"x\"]", "{bad"], "mustFromJson");
add("{\"a\":{\"b\":\"c\"}}", "fromJson | toJson");
add("{\"k\":[1,2]}", "fromJson | toPrettyJson");
add("{\"a\":1}", "(fromJson .).a");
add("{\"a\":1}", "fromJson | kindOf");
add("[1]", "fromJson | typeOf");

// ---- reflection -----------------------------------------------------------------------------------
std([
  "typeOf",
  "typeOf 1",
  "typeOf 1.5",
  "typeOf nil",
  "typeOf (list)",
  "typeOf (dict)",
  "typeOf (splitList \",\" \"a\")",
  "typeOf (split \",\" \"a\")",
  "typeOf (until 2)",
  "typeOf (chunk 2 (list 1 2 3))",
  "typeOf (semver \"1.0.0\")",
  "typeOf (add 1 1)",
  "typeOf (atoi \"1\")",
  "typeOf true",
  "typeOf 1i",
  "typeOf (regexFindAll \"a\" \"aa\" -1)",
  "typeOf (semver \"1.2.3\").Major",
  "kindOf",
  "kindOf 1",
  "kindOf nil",
  "kindOf (list)",
  "kindOf (dict)",
  "kindOf (semver \"1.0.0\")",
  "kindOf 2.5",
  "kindOf false",
  "typeIs \"string\"",
  "typeIs \"int\" 1",
  "typeIs \"int64\" 1",
  "typeIsLike \"semver.Version\" (semver \"1.0.0\")",
  "typeIsLike \"string\"",
  "kindIs \"string\"",
  "kindIs \"slice\" (list)",
  "kindIs \"map\" (dict)",
  "deepEqual (list 1 2) (list 1 2)",
  "deepEqual (list 1 2) (list 1 3)",
  "deepEqual 1 (int64 1)",
  "deepEqual (dict \"a\" 1) (dict \"a\" 1)",
  "deepEqual \"x\"",
  "deepEqual (rest (list)) (list)",
]);

// ---- lists -----------------------------------------------------------------------------------------
std([
  "append (list 1 2) 3",
  "push (list 1 2) 3",
  "mustAppend (list) 1",
  "mustPush (list 1) nil",
  "prepend (list 2 3) 1",
  "mustPrepend (list) 0",
  "list 1 2 3 | first",
  "mustFirst (list)",
  "list 1 2 3 | rest",
  "mustRest (list 1)",
  "rest (list)",
  "list 1 2 3 | last",
  "mustLast (list)",
  "list 1 2 3 | initial",
  "mustInitial (list 1 2)",
  "initial (list)",
  "list 1 2 3 | reverse",
  "mustReverse (list)",
  "list 1 2 1 \"a\" \"a\" 1.0 (list 1) (list 1) | uniq",
  "mustUniq (list nil nil)",
  "without (list 1 2 3 2) 2",
  "without (list 1 2 3) 4 1",
  "mustWithout (list \"a\" \"b\") \"a\"",
  "has 2 (list 1 2 3)",
  "has \"2\" (list 1 2 3)",
  "has 1 nil",
  "mustHas (int64 1) (list 1)",
  "list 1 2 3 4 5 | slice",
  "slice (list 1 2 3 4 5) 1",
  "slice (list 1 2 3 4 5) 1 3",
  "mustSlice (list 1 2 3) 0 0",
  "slice (list) 0",
  "slice (splitList \",\" \"a,b,c\") 1 | typeOf",
  "concat (list 1 2) (list 3) (splitList \",\" \"a,b\")",
  "concat",
  "chunk 2 (list 1 2 3 4 5)",
  "chunk 3 (list 1 2 3)",
  "chunk 5 (list)",
  "mustChunk 1 (list \"a\")",
  "list 1 2 | first | typeOf",
  "splitList \",\" \"a,b\" | first | typeOf",
  "until 3 | last",
  "until 5 | reverse",
  "without (until 4) 2 | typeOf",
  "splitList \"\" \"héllo\" | reverse | join \"\"",
  "tuple | len",
]);
pipes("a,b,,c,b", [
  "splitList \",\" | first",
  "splitList \",\" | rest",
  "splitList \",\" | last",
  "splitList \",\" | initial",
  "splitList \",\" | reverse | join \",\"",
  "splitList \",\" | uniq",
  "splitList \",\" | compact",
  "splitList \",\" | sortAlpha",
  "splitList \",\" | chunk 2",
  "splitList \",\" | has \"b\"",
  "splitList \",\" | len",
  "splitList \",\" | toStrings | typeOf",
  "splitList \",\" | join \"-\"",
  "splitList \",\" | uniq | toJson",
  "list \"z\" | concat (list \"y\")",
]);
pipes("b", [
  "get (dict \"a\" 1 \"b\" 2)",
  "hasKey (dict \"a\" 1 \"b\" 2)",
  "unset (dict \"a\" 1 \"b\" 2)",
  "pick (dict \"a\" 1 \"b\" 2)",
  "omit (dict \"a\" 1 \"b\" 2)",
  "set (dict \"a\" 1) \"k\"",
  "dict \"k\" | toJson",
  "list \"a\" | has",
  "without (list \"a\" \"b\")",
  "slice (list 1 2 3)",
  "push (list \"a\")",
  "mustPrepend (list \"a\")",
  "list 1 | without",
  "pluck \"a\"",
]);
add("x", "append \"y\"", "Cannot push on type string");
add("x", "list | append", "wrong number of args");
add("x", "first", "Cannot find first on type string");
sx("mustFirst (dict)", "Cannot find first on type map");
sx("first nil", "");
add("x", "rest", "Cannot find rest on type string");
sx("last 1", "Cannot find last on type int");
add("x", "reverse", "Cannot find reverse on type string");
add("x", "uniq", "Cannot find uniq on type string");
add("x", "without", "Cannot find without on type string");
add("x", "has 1", "Cannot find has on type string");
add("x", "slice", "list should be type of slice or array but string");
sx("slice (list 1 2) 1 5", "");
sx("slice (list 1 2) 2 1", "");
sx("concat (list 1) \"a\"", "Cannot concat type string as list");
sx("chunk 0 (list 1 2)", "");
sx("chunk -1 (list 1 2)", "");
add("x", "prepend 1", "Cannot prepend on type int");
add("x", "initial", "Cannot find initial on type string");

// ---- dicts ------------------------------------------------------------------------------------------
std([
  "dict \"a\" 1 \"b\"",
  "dict 1 2 nil 3 true 4",
  "dict \"a\" 1 \"a\" 2",
  "get (dict \"a\" 1) \"a\"",
  "get (dict \"a\" 1) \"b\"",
  "get (dict \"a\" nil) \"a\"",
  "set (dict \"a\" 1) \"b\" 2",
  "unset (dict \"a\" 1 \"b\" 2) \"a\"",
  "unset nil \"a\"",
  "get nil \"a\"",
  "hasKey (dict \"a\" 1) \"a\"",
  "hasKey (dict \"a\" 1) \"b\"",
  "hasKey nil \"a\"",
  "pluck \"a\" (dict \"a\" 1) (dict \"b\" 2) (dict \"a\" 3)",
  "pluck \"a\"",
  "keys (dict \"b\" 1 \"a\" 2 \"c\" 3) | sortAlpha",
  "keys (dict \"a\" 1)",
  "keys",
  "keys (dict \"b\" 1) (dict \"a\" 1) | sortAlpha",
  "pick (dict \"a\" 1 \"b\" 2 \"c\" 3) \"a\" \"c\" \"z\"",
  "omit (dict \"a\" 1 \"b\" 2 \"c\" 3) \"a\" \"z\"",
  "values (dict \"a\" 1) | toJson",
  "values (dict)",
  "merge (dict \"a\" 1 \"b\" \"\") (dict \"b\" 2 \"c\" 3)",
  "merge (dict \"a\" (dict \"x\" 1)) (dict \"a\" (dict \"y\" 2))",
  "merge (dict \"a\" (list 1)) (dict \"a\" (list 2))",
  "merge (dict \"a\" 0 \"b\" false) (dict \"a\" 5 \"b\" true)",
  "merge (dict) (dict \"l\" (list 1 2))",
  "merge (dict \"k\" 1) (dict \"l\" (list 1 2))",
  "merge (dict \"a\" 1) (dict \"a\" nil)",
  "merge (dict \"a\" \"x\") (dict \"a\" (dict \"n\" 1))",
  "merge nil (dict \"a\" 1)",
  "merge (dict \"a\" 1)",
  "mergeOverwrite (dict \"a\" 1 \"b\" 2) (dict \"b\" 3 \"c\" 4)",
  "mergeOverwrite (dict \"a\" (dict \"x\" 1 \"y\" 1)) (dict \"a\" (dict \"y\" 2))",
  "mergeOverwrite (dict \"a\" 1) (dict \"a\" nil)",
  "mergeOverwrite (dict \"a\" (list 1)) (dict \"a\" (list 2))",
  "mergeOverwrite (dict \"a\" 1) (dict \"a\" \"\")",
  "mustMerge (dict \"a\" 1) (dict \"b\" 2) (dict \"a\" 3 \"c\" 4)",
  "mustMergeOverwrite (dict \"a\" 1) (dict \"a\" 2) (dict \"a\" 3)",
  "deepCopy (dict \"a\" (list 1 (dict \"b\" 2)))",
  "mustDeepCopy (list 1 2)",
  "deepCopy \"s\"",
  "deepCopy 5",
  "deepCopy nil",
  "deepCopy (semver \"1.2.3\")",
  "dig \"a\" \"b\" \"def\" (dict \"a\" (dict \"b\" \"found\"))",
  "dig \"a\" \"x\" \"def\" (dict \"a\" (dict \"b\" \"found\"))",
  "dig \"a\" \"def\" (dict \"a\" 1)",
  "dig \"z\" \"def\" (dict)",
  "set (dict) \"k\" . | toJson",
  "dict \"v\" . | toJson",
]);
sx("dig \"a\" (dict)", "dig needs at least three arguments");
sx("dig \"a\" \"b\" \"d\" (dict \"a\" 1)", "interface conversion");
sx("dig 1 \"d\" (dict)", "interface conversion");
sx("dig \"a\" \"d\" \"notadict\"", "interface conversion");
sx("set nil \"a\" 1", "assignment to entry in nil map");
sx("get (split \",\" \"a\") \"_0\"", "wrong type for value; expected map[string]interface {}; got map[string]string");
add("x", "hasKey . \"a\"", "");
sx("keys \"x\"", "");
sx("merge (dict) \"x\"", "");
add("a,b", "(split \",\" .)._1");

// ---- encoding & hashing ---------------------------------------------------------------------------
each(["", "hello", MB, "\u0000\u00ff", "a"], "b64enc");
each(["aGVsbG8=", "aGVsbG8", "aGVs bG8=", "aGVsbG8=\n", "aGVs\nbG8=", "!!!!", "aGVsbG8==", "aGVsbA==x", "aGVsbA=", "", "=", "YQ", "YQ==", "YR==", "w6k=", "/w==", "aGVsbG8gd29ybGQ=\r\n"], "b64dec");
each(["", "hello", MB, "f", "fo", "foo", "foob", "fooba", "foobar"], "b32enc");
each(["NBSWY3DP", "NBSWY3DP====", "MZXW6YQ=", "MY======", "invalid!", "MZXW6===", "M=======", "NBSW Y3DP", "mzxw6yq=", "MZXW6YQ=MY"], "b32dec");
add("round trip", "b32enc | b32dec");
each(["", "hello", MB], "sha1sum");
each(["", "hello", MB], "sha256sum");
each(["", "hello"], "sha512sum");
each(["", "hello", MB, "Wikipedia"], "adler32sum");
pipes("k8s/ns 1+1&a=b?", ["urlquery", "urlquery \"x y\" 1", "html", "js"]);
each(["<script>alert('x\" & y')</script>", "\u0000nul", "ok"], "html");
each(["it's \"quoted\" <b> & = \\", "line\nbreak\ttab", "é 日本 \u2028", "\u0007"], "js");
add("x", "html 1 \"<\" nil");
add("x", "js (list \"<\")");

// ---- regex ------------------------------------------------------------------------------------------
pipes("foo bar baz", [
  "regexMatch \"^foo\"",
  "regexMatch \"^bar\"",
  "regexMatch \"(?i)FOO\"",
  "regexMatch \"a.c\"",
  "regexMatch \"[\"",
  "mustRegexMatch \"b.r\"",
  "regexFind \"b..\"",
  "regexFind \"x\"",
  "mustRegexFind \"a[rz]\"",
  "print (regexFindAll \"b..\" . -1)",
  "print (regexFindAll \"b..\" . 1)",
  "print (regexFindAll \"b..\" . 0)",
  "print (regexFindAll \"x*\" . -1)",
  "print (regexFindAll \"\" . -1)",
  "print (regexFindAll \"a|\" . -1)",
  "print (mustRegexFindAll \"[aeiou]\" . 3)",
  "print (regexReplaceAll \"a(.)\" . \"<$1>\")",
  "print (regexReplaceAll \"a(.)\" . \"$1W\")",
  "print (regexReplaceAll \"a(.)\" . \"${1}W\")",
  "print (regexReplaceAll \"a(?P<x>.)\" . \"[$x]\")",
  "print (regexReplaceAll \"a(?P<x>.)\" . \"[${x}]\")",
  "print (regexReplaceAll \"a(.)\" . \"$$1 $\")",
  "print (regexReplaceAll \"a(.)\" . \"$2|$0|$01|${}\")",
  "print (regexReplaceAll \"\" . \"-\")",
  "print (regexReplaceAll \"x*\" . \"-\")",
  "print (regexReplaceAll \"a*\" . \"-\")",
  "print (mustRegexReplaceAll \"(b)(a)\" . \"$2$1\")",
  "print (regexReplaceAllLiteral \"a(.)\" . \"$1\")",
  "print (mustRegexReplaceAllLiteral \"\\\\s\" . \"_\")",
  "print (regexSplit \" \" . -1)",
  "print (regexSplit \"a\" . 2)",
  "print (regexSplit \"\" . -1)",
  "print (regexSplit \"z\" . 0)",
  "print (regexSplit \"x*\" . -1)",
  "print (mustRegexSplit \"[ab]\" . -1)",
  "regexQuoteMeta",
  "print (regexQuoteMeta \"a.b*c[d]{e}(f)|g^h$i\\\\j+k?\")",
  "regexFind \"\\\\bba\\\\w\"",
  "regexFind \"(?U)b.+\"",
  "regexFind \"ba.+?\"",
  "print (regexFindAll \"\\\\w+\" . -1)",
  "regexFind \"\\\\Abaz\"",
  "regexFind \"baz\\\\z\"",
  "regexFind \"[[:alpha:]]+$\"",
  "regexFind \"\\\\pL+\"",
  "regexFind \"\\\\p{Lu}\"",
  "regexFind \"\\\\Qo b\\\\E\"",
  "regexFind \"o{2}\"",
  "regexFind \"o{,2}\"",
  "regexFind \"a{1000}\"",
  "print (regexReplaceAll \"(?P<first>\\\\w+) (?P<second>\\\\w+)\" . \"${second} ${first}\")",
]);
add("foo", "regexFind \"a{1001}\"", "invalid repeat count");
add("foo", "regexFind \"a**\"", "invalid nested repetition operator");
add("foo", "regexFind \"(?=x)\"", "invalid or unsupported Perl syntax");
add("foo", "regexFind \"\\\\1\"", "invalid escape sequence");
add("foo", "regexFind \"*\"", "missing argument to repetition operator");
add("foo", "regexFind \"(\"", "missing closing )");
add("foo", "regexFind \")\"", "unexpected )");
add("foo", "mustRegexFind \"[z-a]\"", "invalid character class range");
sx("mustRegexFindAll \"\\\\p{Nope}\" . -1", "invalid character class range", "foo");
sx("regexFindAll \"(\" . -1", "missing closing )", "foo");
sx("regexReplaceAll \"[\" . \"x\"", "missing closing ]", "foo");
sx("regexReplaceAllLiteral \"+\" . \"x\"", "missing argument to repetition operator", "foo");
sx("regexSplit \"(\" . -1", "missing closing )", "foo");
add("foo", "mustRegexMatch \"(?P<>x)\"", "invalid named capture");
sx("mustRegexReplaceAll \"\\\\C\" . \"x\"", "invalid escape sequence", "foo");
sx("mustRegexSplit \"x{2}{3}\" . -1", "invalid nested repetition operator", "foo");
add("line1\nline2\r\nline3", "print (regexFindAll \"(?m)^line\\\\d$\" . -1)");
add("line1\nline2", "print (regexFindAll \"^line\\\\d$\" . -1)");
add("a\nb", "print (regexFindAll \".\" . -1)");
add("a\nb", "print (regexFindAll \"(?s).\" . -1)");
add("a\u000bb c\u00a0d", "print (regexSplit \"\\\\s\" . -1)");
add("KELVIN \u212a k ſ S", "print (regexFindAll \"(?i)k|s\" . -1)");
add("aXbxc", "print (regexSplit \"(?i)x\" . -1)");
add("k\u212aK", "print (regexFindAll \"(?i)[^k]\" . -1)");
add(MB, "print (regexFindAll \".\" . -1 | join \"|\")");
add(MB, "print (regexReplaceAll \"[öé]\" . \"_\")");
add(MB, "regexFind \"w.rld\"");
add(MB, "print (regexReplaceAll \".\" (trunc 2 .) \"<$0>\")");
add("2024-01-15", "print (regexReplaceAll \"(\\\\d+)-(\\\\d+)-(\\\\d+)\" . \"$3/$2/$1\")");
add("abc", "print (regexMatch . \"abc\")");
add("a1b22c333", "print (regexFindAll \"[0-9]+\" . -1 | toJson)");
add("a.b", "regexQuoteMeta");
add("tabs\there", "print (regexReplaceAll \"[\\\\t]\" . \"\\\\t\")");
add("aaa", "print (regexReplaceAll \"a*?\" . \"-\")");
add("abab", "print (regexFindAll \"(a)(b)?\" . -1)");
sx("regexFind \"\\\\x41\\\\x{42}\\\\101\" \"zAB\"");

// ---- semver -----------------------------------------------------------------------------------------
each(["1.2.3", "v1.2.3", "1.2", "1", "1.2.3-beta.1+build.5", "01.2.3", "1.2.3-01", "1.2.3+meta_bad", "x.y.z", "", "1.2.3.4", "99999999999999999999.0.0"], "semver");
std([
  "(semver \"1.2.3-rc.1+b\").Major",
  "(semver \"1.2.3-rc.1+b\").Minor",
  "(semver \"1.2.3-rc.1+b\").Patch",
  "(semver \"1.2.3-rc.1+b\").Prerelease",
  "(semver \"1.2.3-rc.1+b\").Metadata",
  "(semver \"v1.2\").Original",
  "(semver \"v1.2\").String",
  "(semver \"1.2.3\").IncMinor",
  "(semver \"1.2.3-rc\").IncPatch",
  "(semver \"v1.2.3\").IncMajor",
  "(semver \"1.2.3\").LessThan (semver \"1.10.0\")",
  "(semver \"1.2.3\").Compare (semver \"1.2.3-alpha\")",
  "(semver \"1.2.3\").Equal (semver \"v1.2.3\")",
  "(semver \"1.2.3\").Nope",
  "(semver \"1.2.3\").major",
]);
const sc = (c, v) => add(v, `semverCompare "${c}"`);
sc(">=1.2.0", "1.2.3");
sc(">=1.2.0", "1.1.9");
sc("^1.2.0", "1.9.0");
sc("^1.2.0", "2.0.0");
sc("^0.2.3", "0.2.9");
sc("^0.2.3", "0.3.0");
sc("^0.0.3", "0.0.4");
sc("~1.2.3", "1.2.9");
sc("~1.2.3", "1.3.0");
sc("~1", "1.9.9");
sc("1.2.x", "1.2.7");
sc("1.2.x", "1.3.0");
sc("*", "5.0.0");
sc("*", "5.0.0-rc1");
sc(">1.0", "1.0.5");
sc(">1.0.0-alpha", "1.0.0-beta");
sc("<2.0.0", "2.0.0-rc.1");
sc(">= 1.0, < 2", "1.5.0");
sc(">= 1.0, < 2", "2.0.0");
sc("1.0 - 2.0", "1.5.0");
sc("1.0 - 2.0", "2.1.0");
sc("<1.0 || >=3.0", "3.1.0");
sc("<1.0 || >=3.0", "2.0.0");
sc("!=1.2.3", "1.2.3");
sc("!=1.2.x", "1.3.0");
sc("=1.2.3", "v1.2.3");
sc("1.2.3", "1.2.3+build");
sc("<=1.2", "1.2.9");
sc(">1.2", "1.3.0");
sc("~>2.1", "2.1.5");
sc("=>1.0", "1.0.0");
sc("=<1.0", "0.9.0");
sc("", "1.0.0");
add("1.0.0", "semverCompare \"bad constraint!\"", "improper constraint");
add("notaversion", "semverCompare \">1.0\"", "Invalid Semantic Version");
sx("semverCompare \">1.0\" \"1.5.0\"");

// ---- paths ------------------------------------------------------------------------------------------
const paths = ["/a/b/c.txt", "a/b/", "", "/", "//x//y/", "../a/./b/../c", "file.tar.gz", ".hidden", "a/.", "/../x", "a/b/../../.."];
each(paths, "base");
each(paths, "dir");
each(paths, "clean");
each(paths, "ext");
each(["/abs", "rel", ""], "isAbs");
each(["/a/b/c.txt", "a/b/", ""], "osBase");
each(["/a/b/c.txt", "a/b/", ""], "osDir");
each(["../a/./b/../c", ""], "osClean");
each(["x.tar.gz", "noext"], "osExt");
each(["/abs", "rel"], "osIsAbs");

// ---- URLs -------------------------------------------------------------------------------------------
each([
  "https://user:p%40ss@example.com:8443/a%20b/c?q=1&r=%20#frag%21",
  "http://example.com",
  "mailto:someone@example.com",
  "/just/a/path?x=y",
  "//host.only/p",
  "file:///etc/hosts",
  "https://[::1]:80/x",
  "HTTP://UPPER.example.com/",
  "relative/path",
  "https://example.com/?",
  "https://example.com/a?b#c#d",
  "http://a:b:c/",
  "git+ssh://git@github.com:org/repo.git",
  "https://ex.com/caf%C3%A9",
  "https://user@host",
], "urlParse");
add(":nope", "urlParse", "unable to parse url");
add("http://[::1", "urlParse", "unable to parse url");
add("1http://x", "urlParse");
add("a:b/c", "urlParse");
add("./a:b", "urlParse");
sx("urlParse \"http://x/%zz\"", "unable to parse url");
add("https://example.com:8080/p?q=1#f", "urlParse | urlJoin");
add("https://u:p@h/x", "urlParse | urlJoin");
std([
  "urlJoin (dict \"scheme\" \"https\" \"host\" \"example.com\" \"path\" \"/a b\" \"query\" \"x=1\" \"fragment\" \"f g\")",
  "urlJoin (dict \"scheme\" \"mailto\" \"opaque\" \"a@b.c\")",
  "urlJoin (dict \"path\" \"a:b/c\")",
  "urlJoin (dict \"host\" \"h\" \"path\" \"rel\")",
  "urlJoin (dict \"scheme\" \"https\" \"host\" \"h\" \"userinfo\" \"user:pass\")",
  "urlJoin (dict)",
  "urlJoin (dict \"host\" \"héllo\")",
]);
sx("urlJoin (dict \"host\" 1)", "must be of type string");
sx("urlJoin (dict \"host\" nil)", "");

// ---- crypto -----------------------------------------------------------------------------------------
sx("derivePassword 1 \"long\" . \"user\" \"example.com\"", undefined, "secret");
sx("derivePassword 2 \"maximum\" . \"user\" \"example.com\"", undefined, "secret");
sx("derivePassword 1 \"pin\" . \"ü\" \"site\"", undefined, "secret");
sx("derivePassword 1 \"nope\" . \"user\" \"site\"", undefined, "secret");
sx("derivePassword -1 \"pin\" . \"u\" \"s\"", "expected unsigned integer", undefined, "secret");
// decryptAES: ciphertext made with sprig's encryptAES (password "secretkey", plaintext "hello world")
add("/Bwb0BQSQhgS8FzQFDp2gmmWbuHaFUFSoGux7bATMvI=", "decryptAES \"secretkey\"");
add("4cEWy4ThOUJV5BA8G7FUm0zsoOUGfr7RKy4/kYasqjZzsIaqlyLwl8i48AUy6ch0w4KJZ/yzijP3ZSdLWkn5G/fCeSGnZpeT5PyhwfGm6Xw=", "decryptAES \"a-very-long-password-that-exceeds-32-bytes!!\"");
add("/Bwb0BQSQhgS8FzQFDp2gmmWbuHaFUFSoGux7bATMvI=", "decryptAES \"wrongkey\"", "");
// buildCustomCert: certificates and keys generated once with sprig's genSelfSignedCert(WithKey)
const EC_CERT = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJhRENDQVEyZ0F3SUJBZ0lRSlVLb3UwL3N1ajNYT1FtY05NK1ZNakFLQmdncWhrak9QUVFEQWpBVk1STXcKRVFZRFZRUURFd3ByYUc5dmF5NTBaWE4wTUI0WERUSTJNVEV5TVRFNU1URXpNMW9YRFRNMk1URXhPREU1TVRFegpNMW93RlRFVE1CRUdBMVVFQXhNS2EyaHZiMnN1ZEdWemREQlpNQk1HQnlxR1NNNDlBZ0VHQ0NxR1NNNDlBd0VICkEwSUFCSDFWbThva045MXFUdFJydmJBUGRRZG5WVlFFRWgzNTVnWENieEc4akZ6MjhCSytvNU8wRk0xUFNqVHUKbjdXN0xKOWxNY2EyREhnSmxHSEY3MTVIeWdXalB6QTlNQTRHQTFVZER3RUIvd1FFQXdJRm9EQWRCZ05WSFNVRQpGakFVQmdnckJnRUZCUWNEQVFZSUt3WUJCUVVIQXdJd0RBWURWUjBUQVFIL0JBSXdBREFLQmdncWhrak9QUVFECkFnTkpBREJHQWlFQXpLV0hnb0tpMWRmSWdlRXFJMU85N29DaGxRdjhQOHlBdkh0eS81OTNQejRDSVFDeGdrczMKYVRhamRKbCtsVmVndGZTeFRObmw5N3ZuNlRQT3Z4a3l2WDU5OHc9PQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==";
const EC_KEY = "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSVBCMzBxelE1ZVZ0VHFzNFNKZk56OEx4ODlWRURldnZEZGhsSHkreElOMGJvQW9HQ0NxR1NNNDkKQXdFSG9VUURRZ0FFZlZXYnlpUTMzV3BPMUd1OXNBOTFCMmRWVkFRU0hmbm1CY0p2RWJ5TVhQYndFcjZqazdRVQp6VTlLTk82ZnRic3NuMlV4eHJZTWVBbVVZY1h2WGtmS0JRPT0KLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0tLQo=";
const RSA_CERT = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM3ekNDQWRlZ0F3SUJBZ0lRQ3ZXZ0MxZ3VCQTVtQjhWVHNNaE1KREFOQmdrcWhraUc5dzBCQVFzRkFEQVQKTVJFd0R3WURWUVFERXdoeWMyRXVkR1Z6ZERBZUZ3MHlOakV4TWpFeE9URXhNek5hRncwek5qRXhNVGd4T1RFeApNek5hTUJNeEVUQVBCZ05WQkFNVENISnpZUzUwWlhOME1JSUJJakFOQmdrcWhraUc5dzBCQVFFRkFBT0NBUThBCk1JSUJDZ0tDQVFFQXAxL2ZJTExwajYwMlhLYjhsekNSK25KVzkrdTZlQnVHa0U2cjVoTnVEQ2hmZXlISHAydnIKc2didEMrYmo5elF2c2x1bWpBN3BIbCtOMFc2eURDZW5OMDlac2pLZUVKSlV5MzdiYTJNU2FTWU1GUFpvRCsrZgpEYzdWMzVQaS80ei9WYWtwUExpY2R6MzlNNlE1NFVHZGVhanpDWG5CWFczbkI0TjBrMnplOUhrSWFHWFRSL25ICktTdkJaMTd0NEQrdWRKb0RMMm5tYWhvNG1nY1hEMjd3aytzK3ovWmY5dkxQSThCUXk3cHIyOWZEdHU1bGJnM24KM21YVk9yQmJaeEpzWGluVklRdXBydzNzUE91bE10UHpKSVpqYVJ5ZE5RSmk3cVI1b0hCUy84L2hJdjJFMjN3Ygo5RmNNZ2hYQmZIVnd1WERrYzNrTVJLZDJKdGlENTBPdnZ3SURBUUFCb3o4d1BUQU9CZ05WSFE4QkFmOEVCQU1DCkJhQXdIUVlEVlIwbEJCWXdGQVlJS3dZQkJRVUhBd0VHQ0NzR0FRVUZCd01DTUF3R0ExVWRFd0VCL3dRQ01BQXcKRFFZSktvWklodmNOQVFFTEJRQURnZ0VCQUE2cEt3Zlhvb2VJclRxUXJHSHBPWkZNbk5xcUNvU3FtaWx2eC9TRQoza20zNUJENCtQMVZVNDlWV3cya2d1WFd5VW1iRGQ2WWZ4ZEFia3VGbENReDNLb0lMeS9FTENGQk40QjRaQzN6CkNJL21VYjFJbGVabjJLOHB3Um9rRWN2a0ljYlRTQTc3QjJqYVhKdzZwTUVERG8rb3N4ZGYzWEloWXV1OUFSUFIKRm80R1RFdnFCUkxqQ0Fnb2lMcnlUR2g0TEVVaS9BUGVBUFFLcHRsKzh0QmxVR3JydFlLTVZEREdRVmFLSURHUQpEekl1cEd4Y2Q3SDNmNzYvelBVMVpJeVBJNWU4dU9IV3NTMVdteHhvTHozVXNkWE9nWFphRVJnTjhGSC8vVjBICndlRGtXMjh0b2N3NkR2bGh5a0NhL0hITFpUaTZmYXJrSC9ESFBIMWR4SzdKK21zPQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==";
const RSA_KEY = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBcDEvZklMTHBqNjAyWEtiOGx6Q1IrbkpXOSt1NmVCdUdrRTZyNWhOdURDaGZleUhICnAydnJzZ2J0Qytiajl6UXZzbHVtakE3cEhsK04wVzZ5RENlbk4wOVpzaktlRUpKVXkzN2JhMk1TYVNZTUZQWm8KRCsrZkRjN1YzNVBpLzR6L1Zha3BQTGljZHozOU02UTU0VUdkZWFqekNYbkJYVzNuQjROMGsyemU5SGtJYUdYVApSL25IS1N2QloxN3Q0RCt1ZEpvREwybm1haG80bWdjWEQyN3drK3Mrei9aZjl2TFBJOEJReTdwcjI5ZkR0dTVsCmJnM24zbVhWT3JCYlp4SnNYaW5WSVF1cHJ3M3NQT3VsTXRQekpJWmphUnlkTlFKaTdxUjVvSEJTLzgvaEl2MkUKMjN3YjlGY01naFhCZkhWd3VYRGtjM2tNUktkMkp0aUQ1ME92dndJREFRQUJBb0lCQUJLejNLVWZrNGdKcW1WQQpYRUdjQjB2WUxVMzhhaDgrc0Nnb1A2bHd3QW9kYVhkREJ6ZDI1ZVR1NzRaZ3hxdHZ0T2xndUE1aGQzelIzNXZUClJlajVkZ1Fici9jQXYweUp3QmpuSHRIejhFYmpTS2xVL3J3bnpLV2QyRTg5NFdQVFFtV0tNVlh4Zm1aaXA3YjIKdHhNQkluMTBPckxJaDFTNTBhZ3pjUStDTkYycjN2MWZKa2tvaFVKY2wvS3ZBZnBlSDNRZkhjalk3UzZvZ0d2cgpLNDRwYmxKYXYyTWNKVS9STXVqTnZrVjlKUzFmMDVpUE04ZTFyaXBpU3pYRVUvWENZWURMajdWTHptSDFGbDBhCnVlbVJwa041dHF6T2tQaUJEa2htOG1BSy93dWVBLy96UU1xR3pMdDUycEdiUWQvS2tDNmV1WmR2dEhjNjA3ek0KREN3elVURUNnWUVBeUZjZzhpOWt5RnlEWEVRUGZrcTNoUmdlNHVWR0pRQ3paL1VkTmErRklHVU8zQmY1bHFqRQpJN2hsNnJ2SlYxazh6bDAwOXBIdTQ1MTBuUFRUSmdmSmVhc2lHcUd3ZWZzWjNIdVpsS2pOM0ROOVR5Q0hTNGxWCjZnempya29EL0NWTlpkQVF0MXNIVEJZdUZIQ3NtcURHK05DR2phWDR3c1FHTzRKQTBQSmViZzhDZ1lFQTFlQWEKS3RRR2ZtU1BNUVlsUlh0cVFYd3QzNHN0T043UlQzZVgvOEM1RWtFbkpVTXhiMmJWTkk3SWVMaXp4VG5MWHF6KwpsYTdzSStmT3lJam4wT1V6aFlQUldKa1hIS1hPNmVzbVkvQUVJRTVKR1VhaWU0U21CTEN6R3NMeWxiaUM1eWhUCmd1R0V3dFNtQ0srV2puYjlERTlWSm5yYzNTMVd5Y0U4ZEg4TVUxRUNnWUVBaW9JaWx3NUpRWFVrcEoreGpvRWQKekhqV3Njd042UHRKRGpDYkYwallZNE02K05QaWpWVDA5alZBMFQ4dmZxS0Z0YThmTlBIRUZiNEFwNXRrZUVDZAovTzVpVDhORi9hK3JPNUtBcGhUbTdyenlmOGhmZ2N2YmlFdU5CaXpLQUlQUnRQaGE5a21MREFHeHJoUVFZWCtTCjBPZHFmM2dtT3BISU5WQmllNU4xMGVVQ2dZQUlKOEozclp3Tng4SGFDYlQwSUUrZDdhRkdLK1Z1akxpSWdqUHUKa2FlODlYVUxxN00vM3pqMEJ4bkgyS3NxTXhqNUpEbVU5WldWak9wS3BVWEpwbU8vakpZMy9hWnU5amVjbmRYWgo2N1lNa1UraVFocENBWDNmSWVuQ2RIcVJrUGFVMytuSFROZ21JYnV2Q3hyL2xiUHllemZ3L3JCYlVyWkRmVFhUCjcyQkY4UUtCZ0NZdDE1aFBmZmFvLy9OSXRINzdINW9tZndzUW5abjJPV1c3VHJ1VFZNK3doYXZiSyt2WndUR20KaUlvMWlBZW9sTlV3OEpsZ1FnWXA0U1NDRWZWaXlRYUJRSVRDenZrd2FOenNxd2pRWU1UZVF6WU1kSlpSRXp1MgordVVkSi9HamJ6a29xTmUyT1RUWk5xRFI1RWRER2c5eTA5THF2YjZzUk94U3JWWnBYZHZDCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg==";
add(EC_KEY, `buildCustomCert "${EC_CERT}" | toJson`);
add(EC_KEY, `buildCustomCert "${EC_CERT}" | printf "%v"`);
add(EC_KEY, `print ((buildCustomCert "${EC_CERT}" .).Cert | sha256sum)`);
add(RSA_KEY, `print ((buildCustomCert "${RSA_CERT}" .).Key | trunc 31)`);
add(RSA_KEY, `buildCustomCert "${RSA_CERT}" | typeOf`);
add(EC_KEY, `buildCustomCert "${RSA_CERT}" | kindOf`);
add(RSA_KEY, `buildCustomCert "${EC_KEY}"`, "error parsing certificate");
add("bm90IGEga2V5", `buildCustomCert "${EC_CERT}"`, "error parsing private key");
add(EC_KEY, `print (buildCustomCert "${EC_CERT}" .).Nope`, "can't evaluate field Nope");
add("", "decryptAES \"secretkey\"");
add("not base64!", "decryptAES \"secretkey\"", "illegal base64 data");
add("c2hvcnQ=", "decryptAES \"secretkey\"", "");
add("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "decryptAES \"k\"", "");
add("MDEyMzQ1Njc4OWFiY2RlZjAx", "decryptAES \"k\"", "");
sx("buildCustomCert \"bm90IGEgY2VydA==\" \"bm90IGEga2V5\"", "unable to decode certificate");
sx("buildCustomCert \"!!\" \"\"", "unable to decode base64 certificate");
sx("buildCustomCert \"\" \"!!\"", "unable to decode base64 private key");

// ---- dates and durations -------------------------------------------------------------------------
each(["0", "1", "59", "60", "61", "3600", "3661", "86400", "-90", "abc", "1.5", "99999999999999999999"], "duration");
std(["duration 90", "duration (int64 90)", "duration nil"]);
each(["1h30m", "90s", "2400h", "-48h", "720h", "1.5h", "45m", "30s", "500ms", "bad", "0", "8761h", "1m0s", "1us", "3\u00b5s", ""], "durationRound");
std(["durationRound (int64 3600000000000)", "durationRound 5", "durationRound nil"]);
add("1700000000", "unixEpoch", "wrong type for value; expected time.Time; got string");
add("x", "mustDateModify \"1h\"", "wrong type for value; expected time.Time; got string");
add("x", "must_date_modify \"1h\"", "wrong type for value; expected time.Time");
sx("unixEpoch nil", "cannot assign nil");

// ---- builtins ------------------------------------------------------------------------------------
pipes("abc", [
  "len",
  "index . 1",
  "index . 0 | printf \"%c\"",
  "index (list 1 (list 2 3)) 1 0",
  "index (dict \"a\" 1) \"a\"",
  "index (dict \"a\" 1) \"zz\"",
  "index (split \",\" \"x\") \"_9\"",
  "index (list 1 2)",
  "eq . \"abc\"",
  "eq . \"x\" \"y\" \"abc\"",
  "eq 1 1",
  "eq 1 (int64 1)",
  "eq 1 1.0",
  "eq (semver \"1.2.3\").Major 1",
  "eq (list) (list)",
  "ne . \"abc\"",
  "lt . \"abd\"",
  "lt 1 2",
  "lt 2.5 1.5",
  "le 2 2",
  "gt \"b\" \"a\"",
  "ge 1 2",
  "lt 1 2.0",
  "lt true false",
  "and 1 0 2",
  "and 1 2 .",
  "or 0 \"\" .",
  "or 0 \"\"",
  "or 0 nil",
  "not",
  "not \"\"",
  "not 0",
  "not (list)",
  "and (fail \"x\") 0",
  "or 1 (fail \"short-circuit\")",
  "and 0 (fail \"short-circuit\")",
  "len (dict \"a\" 1 \"b\" 2)",
  "len (list)",
  "len 5",
  "index . 5",
  "index . -1",
  "index 5 1",
  "index (list 1) \"a\"",
  "index (dict) 1",
  "eq",
  "eq (list 1)",
  "ne 1",
  "len nil",
  "not nil",
  "and",
  "call .",
  "call nil",
  "print (first (list)) | not",
  "first (list) | not",
  "first (list) | print",
  "first (list) | upper",
  "eq (first (list)) 1",
]);

// ---- excluded / helm functions (Go: not defined in the func map) --------------------------------
for (const name of ["now", "date", "randAlphaNum", "uuidv4", "env", "expandenv", "getHostByName", "randInt", "shuffle",
  "encryptAES", "ago", "toDate", "mustToDate", "bcrypt", "htpasswd", "genPrivateKey", "genCA", "genSelfSignedCert",
  "genSignedCert", "toYaml", "fromYaml", "include", "tpl", "required", "lookup", "toToml", "randBytes", "dateInZone",
  "date_modify", "htmlDate", "genCAWithKey", "genSelfSignedCertWithKey", "genSignedCertWithKey", "randNumeric",
  "randAscii", "randAlpha", "htmlDateInZone", "dateModify", "date_in_zone"]) {
  add("x", name, "not defined");
}

// ---- pitfalls from spec/pipeline-functions.md, on multibyte text ----------------------------------
pipes(CJK, ["len", "trunc 3", "trunc 3 | len", "substr 0 3", "index . 0", "b64enc", "sha256sum", "quote", "printf \"%q\"", "printf \"%.2s|%5.1s|\"", "upper", "title", "toJson", "splitList \"\" | len", "print (regexFindAll \".\" . 2)"]);
pipes("false", ["default \"was-empty\"", "empty", "not", "and . \"next\"", "ternary \"t\" \"f\" (empty .)"]);
pipes("0", ["default \"was-empty\"", "empty", "int | default \"int-empty\"", "atoi | empty"]);
pipes("010", ["int", "int64", "atoi", "float64", "add 0", "add1", "toDecimal"]);
pipes("0x1F", ["int", "atoi", "float64", "add 1"]);
pipes("08", ["int", "atoi", "float64", "int64"]);
pipes("1e6", ["float64", "int", "atoi", "add 0", "float64 | int", "addf 0"]);
pipes("3.7", ["int", "float64", "floor", "ceil", "round 0", "add 1", "mul 2", "maxf 2", "divf 2"]);
pipes("-12", ["int", "atoi", "add1", "sub 2", "max 0", "min 0", "float64"]);
pipes("Straße İstanbul ǆ", ["upper", "lower", "title", "swapcase", "untitle"]);
pipes("  mixed Case  ", ["trim | upper", "nospace", "trim | title | quote", "trim | kebabcase"]);
pipes("my-app_v2", ["upper | lower | trunc 63", "snakecase", "camelcase", "kebabcase", "replace \"_\" \"-\" | upper"]);
pipes("token", ["b64enc", "b64enc | b64dec", "b32enc | b32dec", "sha1sum | trunc 8", "printf \"%sm\"", "quote | squote"]);
pipes("5", ["printf \"%sm\"", "printf \"%d\" (atoi .)", "atoi | printf \"%03d\"", "int | mul 60 | printf \"%ds\""]);

// ---- seeded random cases (differential testing) -----------------------------------------------
for (const c of randomCases()) add(c.value, c.pipeline);

const seen = new Set();
const unique = C.filter((c) => {
  const k = c.value + "\u0000" + c.pipeline;
  if (seen.has(k)) return false;
  seen.add(k);
  return true;
});
process.stdout.write(JSON.stringify(unique, null, 0).replace(/^\[/, "[\n").replace(/\},\{/g, "},\n{").replace(/\]$/, "\n]\n"));
