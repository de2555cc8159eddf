package sample

import (
	"fmt"
	"strings"
)

// The scripted outputs of the session's commands: what pip, pytest, ruff,
// git and the tracebacks print, computed from the workspace and the data
// where they depend on them.

const moneyDecimal = `"""Parsing and formatting of money amounts.

Amounts are Decimals: the report adds thousands of them, and floats drift
by a cent. The billing export writes each amount in its customer's locale,
so both "1,234.50" and "1.234,50" occur in one file.
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def parse_amount(text):
    """Return the amount in text as a Decimal.

    The decimal separator is the last "." or "," when at most two digits
    follow it; every other separator groups thousands.
    """
    s = text.strip().replace(" ", "")
    last = max(s.rfind("."), s.rfind(","))
    if last != -1 and len(s) - last - 1 <= 2:
        whole, frac = s[:last], s[last + 1 :]
    else:
        whole, frac = s, ""
    whole = whole.replace(",", "").replace(".", "")
    try:
        return Decimal(f"{whole}.{frac or '0'}")
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None


def round_cents(value):
    """Round value to cents, half up, as finance does."""
    return value.quantize(CENT)


def format_amount(value):
    """Format value with two decimals and thousands separators."""
    return f"{round_cents(value):,.2f}"
`

const testLoadPy = `from invoicer.report import load_rows

HEADER = ["invoice", "customer", "country", "net"]


def test_load_comma(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text('invoice,customer,country,net\nINV-2025-03-0001,Brotwerk GmbH,DE,"1.234,50"\n', encoding="utf-8")
    rows = load_rows(path)
    assert list(rows[0]) == HEADER
    assert rows[0]["net"] == "1.234,50"


def test_load_semicolon_bom(tmp_path):
    path = tmp_path / "export-de.csv"
    path.write_text("invoice;customer;country;net\nINV-2025-03-1001;Brotwerk GmbH;DE;1.234,50\n", encoding="utf-8-sig")
    rows = load_rows(path)
    assert list(rows[0]) == HEADER
    assert rows[0]["net"] == "1.234,50"
`

const pipInstall = `Obtaining file:///home/dev/src/invoicer
  Installing build dependencies ... done
  Checking if build backend supports build_editable ... done
  Getting requirements to build editable ... done
  Preparing editable metadata (pyproject.toml) ... done
Collecting click>=8.1 (from invoicer==0.3.0)
  Using cached click-8.1.7-py3-none-any.whl.metadata (3.0 kB)
Collecting pytest>=8 (from invoicer==0.3.0)
  Downloading pytest-8.3.3-py3-none-any.whl.metadata (7.5 kB)
Collecting ruff>=0.6 (from invoicer==0.3.0)
  Downloading ruff-0.6.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl.metadata (25 kB)
Collecting iniconfig (from pytest>=8->invoicer==0.3.0)
  Using cached iniconfig-2.0.0-py3-none-any.whl.metadata (2.6 kB)
Collecting packaging (from pytest>=8->invoicer==0.3.0)
  Using cached packaging-24.1-py3-none-any.whl.metadata (3.2 kB)
Collecting pluggy<2,>=1.5 (from pytest>=8->invoicer==0.3.0)
  Using cached pluggy-1.5.0-py3-none-any.whl.metadata (4.8 kB)
Downloading pytest-8.3.3-py3-none-any.whl (342 kB)
Downloading ruff-0.6.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (10.9 MB)
   ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 10.9/10.9 MB 38.2 MB/s eta 0:00:00
Building wheels for collected packages: invoicer
  Building editable for invoicer (pyproject.toml) ... done
  Created wheel for invoicer: filename=invoicer-0.3.0-0.editable-py3-none-any.whl size=2871 sha256=9c1e0f4b7a2d6e8c3b5a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c
  Stored in directory: /tmp/pip-ephem-wheel-cache-k2x9q1fz/wheels/3e/8a/51/c0d4b7f1e2a9d6c3b8f5e2a7d4c1b9e6f3a0d7c4b1e8f5a2d9c6b3
Successfully built invoicer
Installing collected packages: ruff, pluggy, packaging, iniconfig, click, pytest, invoicer
Successfully installed click-8.1.7 iniconfig-2.0.0 invoicer-0.3.0 packaging-24.1 pluggy-1.5.0 pytest-8.3.3 ruff-0.6.9
`

const decimalDocs = `quantize(exp, rounding=None, context=None)

Returns a value equal to the first operand after rounding and having the
exponent of the second operand. For example, Decimal('1.41421356').quantize(Decimal('1.000'))
gives Decimal('1.414').

If rounding is not given, the rounding mode of the context argument is used;
if no context is given, the rounding mode of the current thread's context is
used. The default context rounds with ROUND_HALF_EVEN.

Rounding modes:

  ROUND_HALF_EVEN  Round to nearest with ties going to nearest even integer.
  ROUND_HALF_UP    Round to nearest with ties going away from zero.
  ROUND_HALF_DOWN  Round to nearest with ties going towards zero.

To round money half up to cents:

  Decimal('2.665').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)  # Decimal('2.67')
`

func keyErrorTrace(w *workspace) string {
	return fmt.Sprintf(`Traceback (most recent call last):
  File "/home/dev/src/invoicer/.venv/bin/invoicer", line 8, in <module>
    sys.exit(main())
             ^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 1157, in __call__
    return self.main(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 1078, in main
    rv = self.invoke(ctx)
         ^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 1688, in invoke
    return _process_result(sub_ctx.command.invoke(sub_ctx))
                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 783, in invoke
    return __callback(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/src/invoicer/cli.py", line %d, in report
    rows = [r for r in load_rows(path) if r["invoice"].startswith(f"INV-{month}")]
                                          ~^^^^^^^^^^^
KeyError: 'invoice'
`, w.line("src/invoicer/cli.py", `rows = [r for r in load_rows(path)`))
}

// crashTrace is what the original report prints on the million-sized EU
// amount.
func crashTrace(w *workspace, big row) string {
	return fmt.Sprintf(`Traceback (most recent call last):
  File "/home/dev/src/invoicer/.venv/bin/invoicer", line 8, in <module>
    sys.exit(main())
             ^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 1157, in __call__
    return self.main(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 1078, in main
    rv = self.invoke(ctx)
         ^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 1688, in invoke
    return _process_result(sub_ctx.command.invoke(sub_ctx))
                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/.venv/lib/python3.12/site-packages/click/core.py", line 783, in invoke
    return __callback(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/src/invoicer/cli.py", line %d, in report
    totals = totals_by_country(rows)
             ^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/src/invoicer/report.py", line %d, in totals_by_country
    net = parse_amount(row["net"])
          ^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/src/invoicer/src/invoicer/money.py", line %d, in parse_amount
    return float(text.strip().replace(",", ""))
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ValueError: could not convert string to float: '%s'
`, w.line("src/invoicer/cli.py", "totals = totals_by_country(rows)"), w.line("src/invoicer/report.py", `net = parse_amount(row["net"])`),
		w.line("src/invoicer/money.py", "return float("), strings.ReplaceAll(big.text, ",", ""))
}

// pytestFail is the run after the switch to Decimal, before the rounding,
// test and discount fixes.
func pytestFail(w *workspace) string {
	return fmt.Sprintf(`F...F...F...                                                             [100%%]
=================================== FAILURES ===================================
__________________________ test_report_early_payment ___________________________

tmp_path = PosixPath('/tmp/pytest-of-dev/pytest-4/test_report_early_payment0')

    def test_report_early_payment(tmp_path):
        csv_file = tmp_path / "x.csv"
        csv_file.write_text('invoice,customer,country,net\nINV-2025-02-0001,Acme Tooling Inc,US,"1,000.00"\n')
        result = CliRunner().invoke(main, ["report", "--month", "2025-02", "--early-payment", str(csv_file)])
>       assert result.exit_code == 0, result.output
E       AssertionError: 
E       assert 1 == 0
E        +  where 1 = <Result TypeError("unsupported operand type(s) for *=: 'decimal.Decimal' and 'float'")>.exit_code

tests/test_cli.py:%d: AssertionError
_________________________________ test_format __________________________________

    def test_format():
>       assert format_amount(1234.5) == "1,234.50"

tests/test_money.py:%d: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 
src/invoicer/money.py:%d: in format_amount
    return f"{round_cents(value):,.2f}"
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

value = 1234.5

    def round_cents(value):
        """Round value to cents, half up, as finance does."""
>       return value.quantize(CENT)
E       AttributeError: 'float' object has no attribute 'quantize'

src/invoicer/money.py:%d: AttributeError
______________________________ test_round_half_up ______________________________

    def test_round_half_up():
>       assert round_cents(Decimal("2.665")) == Decimal("2.67")
E       AssertionError: assert Decimal('2.66') == Decimal('2.67')
E        +  where Decimal('2.66') = round_cents(Decimal('2.665'))
E        +    where Decimal('2.665') = Decimal('2.665')
E        +  and   Decimal('2.67') = Decimal('2.67')

tests/test_money.py:%d: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cli.py::test_report_early_payment - AssertionError: 
FAILED tests/test_money.py::test_format - AttributeError: 'float' object has no attribute 'quantize'
FAILED tests/test_money.py::test_round_half_up - AssertionError: assert Decimal('2.66') == Decimal('2.67')
3 failed, 9 passed in 0.21s
`, w.line("tests/test_cli.py", "assert result.exit_code == 0"), w.line("tests/test_money.py", `assert format_amount(1234.5)`),
		w.line("src/invoicer/money.py", `return f"{round_cents(value):,.2f}"`), w.line("src/invoicer/money.py", "return value.quantize(CENT)"),
		w.line("tests/test_money.py", `assert round_cents(Decimal("2.665"))`))
}

// pytestSniffFail is the run after the reader first sniffs delimiters
// without a candidate list.
func pytestSniffFail(w *workspace, passed int) string {
	return fmt.Sprintf(`%-73s[100%%]
=================================== FAILURES ===================================
_______________________________ test_load_comma ________________________________

tmp_path = PosixPath('/tmp/pytest-of-dev/pytest-7/test_load_comma0')

    def test_load_comma(tmp_path):
        path = tmp_path / "export.csv"
        path.write_text('invoice,customer,country,net\nINV-2025-03-0001,Brotwerk GmbH,DE,"1.234,50"\n', encoding="utf-8")
        rows = load_rows(path)
>       assert list(rows[0]) == HEADER
E       AssertionError: assert ['invoice,cus...ountry,net'] == ['invoice', '...ntry', 'net']
E         
E         At index 0 diff: 'invoice,customer,country,net' != 'invoice'
E         Right contains 3 more items, first extra item: 'customer'
E         Use -v to get more diff

tests/test_load.py:%d: AssertionError
=========================== short test summary info ============================
FAILED tests/test_load.py::test_load_comma - AssertionError: assert ['invoice,cus...ountry,net'] == ['invoice', '...ntry', 'net']
1 failed, %d passed in 0.16s
`, "F"+strings.Repeat(".", passed), w.line("tests/test_load.py", "assert list(rows[0]) == HEADER"), passed)
}

func head(content string, n int) string {
	lines := splitLines(content)
	return strings.Join(lines[:min(n, len(lines))], "\n") + "\n"
}

func countByCountry(m month) string {
	n := map[string]int{}
	for _, r := range m.rows {
		n[r.country]++
	}
	var b strings.Builder
	for _, c := range sortedKeys(n) {
		fmt.Fprintf(&b, "%7d %s\n", n[c], c)
	}
	return b.String()
}

func lsData(w *workspace) string {
	var b strings.Builder
	var files []string
	total := 0
	for _, name := range w.names() {
		if strings.HasPrefix(name, "data/") {
			files = append(files, name)
			total += len(w.files[name])
		}
	}
	fmt.Fprintf(&b, "total %d\n", (total+1023)/1024*4)
	for i, name := range files {
		fmt.Fprintf(&b, "-rw-r--r-- 1 dev dev %5d Apr  %d 0%d:%02d %s\n", len(w.files[name]), 1, 7, 10+i*7, strings.TrimPrefix(name, "data/"))
	}
	return b.String()
}

// gitStatus is git status --short: tracked files changed since the
// session began, and new files (.env is ignored).
func gitStatus(w *workspace) string {
	var b strings.Builder
	for _, name := range w.names() {
		orig, tracked := w.orig[name]
		switch {
		case name == ".env":
		case !tracked:
			b.WriteString("?? " + name + "\n")
		case orig != w.files[name]:
			b.WriteString(" M " + name + "\n")
		}
	}
	return b.String()
}

// gitDiffStat is git diff --stat of the tracked files.
func gitDiffStat(w *workspace) string {
	var names []string
	ins, del := map[string]int{}, map[string]int{}
	width := 0
	for _, name := range w.names() {
		orig, tracked := w.orig[name]
		if !tracked || orig == w.files[name] {
			continue
		}
		names = append(names, name)
		ins[name], del[name] = diffStat(orig, w.files[name])
		width = max(width, len(name))
	}
	var b strings.Builder
	ti, td := 0, 0
	for _, n := range names {
		fmt.Fprintf(&b, " %-*s | %2d %s%s\n", width, n, ins[n]+del[n], strings.Repeat("+", ins[n]), strings.Repeat("-", del[n]))
		ti += ins[n]
		td += del[n]
	}
	b.WriteString(changeSummary(len(names), ti, td))
	return b.String()
}

// commit records files (nil: every change) as committed, with the content
// given in staged where only part of a file's change is committed, and
// returns the summary git commit prints for it.
func (w *workspace) commit(files []string, staged map[string]string) string {
	if files == nil {
		for _, name := range w.names() {
			if name != ".env" && w.orig[name] != w.files[name] {
				files = append(files, name)
			}
		}
	}
	var b strings.Builder
	var creates []string
	ti, td := 0, 0
	for _, f := range files {
		content, ok := staged[f]
		if !ok {
			content = w.files[f]
		}
		orig, tracked := w.orig[f]
		if !tracked {
			creates = append(creates, f)
		}
		i, d := diffStat(orig, content)
		ti += i
		td += d
		w.orig[f] = content
	}
	b.WriteString(changeSummary(len(files), ti, td))
	for _, f := range creates {
		b.WriteString(" create mode 100644 " + f + "\n")
	}
	return b.String()
}

func changeSummary(files, ins, del int) string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, one)
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	s := " " + plural(files, "file changed", "files changed")
	if ins > 0 {
		s += ", " + plural(ins, "insertion(+)", "insertions(+)")
	}
	if del > 0 {
		s += ", " + plural(del, "deletion(-)", "deletions(-)")
	}
	return s + "\n"
}

// function is the text of a Python top-level function of src, from its
// def to the line before the next top-level statement.
func function(src, name string) string {
	start := strings.Index(src, "def "+name+"(")
	if start < 0 {
		panic("sample: no function " + name)
	}
	rest := src[start:]
	end := len(rest)
	for i := strings.Index(rest, "\n"); i >= 0 && i+1 < len(rest); {
		if c := rest[i+1]; c != ' ' && c != '\n' {
			end = i + 1
			break
		}
		next := strings.Index(rest[i+1:], "\n")
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return strings.TrimRight(rest[:end], "\n")
}

// ruffF401 is ruff's report of report.py's unused CENT import, at the line
// the workspace has it.
func ruffF401(w *workspace) string {
	const imp = "from .money import CENT, format_amount, parse_amount, round_cents"
	n := lineOf(w.files["src/invoicer/report.py"], imp)
	return fmt.Sprintf(`src/invoicer/report.py:%d:20: F401 [*] `+"`.money.CENT`"+` imported but unused
   |
%d | from decimal import Decimal
%d | 
%d | from .money import CENT, format_amount, parse_amount, round_cents
   |                    ^^^^ F401
%d | from .tax import vat_rate
   |
   = help: Remove unused import: `+"`.money.CENT`"+`

Found 1 error.
[*] 1 fixable with the `+"`--fix`"+` option.
`, n, n-2, n-1, n, n+1)
}

// line is the number of the line of a file holding s.
func (w *workspace) line(name, s string) int { return lineOf(w.files[name], s) }

func lineOf(content, s string) int {
	for i, l := range splitLines(content) {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	panic("sample: no line with " + s)
}

func grepRow(w *workspace, name, s string) string {
	n := lineOf(w.files[name], s)
	return fmt.Sprintf("%d:%s\n", n, splitLines(w.files[name])[n-1])
}

// plainCents writes cents as Python's Decimal literal ("1234567.00").
func plainCents(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

func sumCents(m month) int64 {
	var n int64
	for _, r := range m.rows {
		n += r.cents
	}
	return n
}

// odHead is od -c of the first 64 bytes, as the first four lines show them.
func odHead(content string) string {
	data := []byte(content)[:64]
	var b strings.Builder
	for off := 0; off < len(data) && off < 64; off += 16 {
		fmt.Fprintf(&b, "%07o", off)
		for _, c := range data[off:min(off+16, len(data))] {
			switch {
			case c == '\n':
				b.WriteString("  \\n")
			case c >= 0x20 && c < 0x7f:
				fmt.Fprintf(&b, "   %c", c)
			default:
				fmt.Fprintf(&b, " %03o", c)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// compareMonths says how January and February changed, from the two
// reports' total lines.
func compareMonths(months ...month) string {
	var b strings.Builder
	b.WriteString("January and February:\n\n| month | VAT before | VAT now | net before | net now |\n|---|---|---|---|---|\n")
	for _, m := range months {
		oldNet, oldVat := totalLine(m.reportFloat())
		newNet, newVat := totalLine(m.reportFixed())
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", m.name, oldVat, newVat, oldNet, newNet)
	}
	b.WriteString("\n")
	for _, m := range months {
		oldNet, oldVat := totalLine(m.reportFloat())
		newNet, newVat := totalLine(m.reportFixed())
		switch {
		case oldNet != newNet:
			fmt.Fprintf(&b, "- %s: net changed (%s before, %s now). Its export already has locale-formatted EU amounts from %s on, which the old parser misread.\n",
				m.name, oldNet, newNet, m.firstLocale())
		case oldVat != newVat:
			fmt.Fprintf(&b, "- %s: net is the same; VAT moved from %s to %s, because it is now rounded half-up per line, as on the invoices, instead of summed unrounded and rounded once. That is the cent finance saw.\n",
				m.name, oldVat, newVat)
		default:
			fmt.Fprintf(&b, "- %s: unchanged.\n", m.name)
		}
	}
	b.WriteString("\nI added `test_eu_million_amount` to `tests/test_report.py` with the row that crashed; the report tests pass.")
	return b.String()
}

func totalLine(report string) (net, vat string) {
	lines := splitLines(report)
	f := strings.Fields(lines[len(lines)-1])
	return f[1], f[2]
}

func lsRoot(w *workspace) string {
	seen := map[string]bool{}
	names := []string{".", "..", ".git", ".venv"}
	for _, n := range w.names() {
		top, _, _ := strings.Cut(n, "/")
		if !seen[top] {
			seen[top] = true
			names = append(names, top)
		}
	}
	return strings.Join(names, "\n") + "\n"
}

// gitDiff is git diff of one file against its original content.
func gitDiff(w *workspace, name, original string) string {
	return fmt.Sprintf("diff --git a/%s b/%s\nindex 3b18e51..8f0c2d4 100644\n", name, name) + Diff(name, diffLines(original, w.files[name]))
}

// firstLocale is the first invoice of a month written with a decimal comma.
func (m month) firstLocale() string {
	for _, r := range m.rows {
		if strings.HasSuffix(r.text, ","+r.text[len(r.text)-2:]) {
			return r.invoice
		}
	}
	return "(none)"
}
