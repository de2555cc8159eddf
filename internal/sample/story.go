package sample

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// builder writes a session event by event, running each call against the
// workspace so that its output is what the earlier calls made of the
// project.
type builder struct {
	r   *rand.Rand
	ws  *workspace
	s   *Session
	now time.Time
}

func (b *builder) tick(minS, maxS int) time.Time {
	b.now = b.now.Add(time.Duration(minS*1000+b.r.IntN((maxS-minS)*1000+1)) * time.Millisecond)
	return b.now
}

// user adds a message the user types.
func (b *builder) user(text string) {
	b.s.Events = append(b.s.Events, Event{Kind: UserText, At: b.tick(20, 240), Text: text})
}

// note adds a harness note.
func (b *builder) note(text string) {
	b.s.Events = append(b.s.Events, Event{Kind: HarnessNote, At: b.tick(0, 1), Text: text})
}

// say adds an assistant turn: thinking and text (either may be empty) and
// the calls it makes, run in order.
func (b *builder) say(thinking, text string, calls ...*Call) {
	e := Event{Kind: AssistantTurn, At: b.tick(2, 9), Thinking: thinking, Text: text, Calls: calls}
	for _, c := range calls {
		b.run(c)
	}
	b.s.Events = append(b.s.Events, e)
}

func (b *builder) run(c *Call) {
	switch c.Tool {
	case ToolRead:
		c.Output, c.Total = b.ws.read(c.Path, c.From, c.Lines)
		if c.From > 0 && c.Lines > c.Total-c.From+1 {
			c.Lines = c.Total - c.From + 1
		}
	case ToolEdit:
		c.Before, c.After, c.Hunks = b.ws.edit(c.Path, c.Old, c.New)
	case ToolWrite:
		c.After = c.Content
		c.Hunks = b.ws.write(c.Path, c.Content)
	case ToolSearch:
		c.Output = b.ws.search(c.Pattern, c.Paths)
	case ToolFind:
		c.Output = b.ws.find(c.Glob)
	case ToolShell:
		c.Failed = c.Exit != 0
	}
	c.At = b.tick(0, 3)
}

// hash is a short commit hash.
func (b *builder) hash() string { return randString(b.r, "0123456789abcdef", 7) }

func shell(cmd, desc, output string, exit int) *Call {
	return &Call{Tool: ToolShell, Command: cmd, Desc: desc, Output: output, Exit: exit}
}
func read(path string) *Call { return &Call{Tool: ToolRead, Path: path} }
func readLines(path string, from, n int) *Call {
	return &Call{Tool: ToolRead, Path: path, From: from, Lines: n}
}
func edit(path, old, new string) *Call {
	return &Call{Tool: ToolEdit, Path: path, Old: old, New: new}
}
func write(path, content string) *Call {
	return &Call{Tool: ToolWrite, Path: path, Content: content}
}
func search(pattern string, paths ...string) *Call {
	return &Call{Tool: ToolSearch, Pattern: pattern, Paths: paths}
}
func find(glob string) *Call       { return &Call{Tool: ToolFind, Glob: glob} }
func plan(items ...PlanItem) *Call { return &Call{Tool: ToolPlan, Plan: items, Output: "Plan updated"} }

// Generate builds the session of seed.
func Generate(seed uint64) *Session {
	r := rand.New(rand.NewPCG(seed, 0x5eed5a3d1e))
	start := time.Date(2025, 4, 2+r.IntN(20), 8+r.IntN(9), r.IntN(60), r.IntN(60), r.IntN(1000)*int(time.Millisecond), time.UTC)
	p := newProject(r)
	s := &Session{
		Seed:    seed,
		Start:   start,
		Project: "invoicer",
		Cwd:     "/home/dev/src/invoicer",
		Branch:  "fix/eu-amounts",
		System: "You are a coding agent working in the user's repository at /home/dev/src/invoicer. " +
			"Use the tools to read, search, edit and run commands. Keep changes small and explain what you did.",
		Secrets: []string{p.stripeKey, p.dbPassword},
	}
	ws := newWorkspace(map[string]string{
		"README.md":                readmeMD,
		"CHANGELOG.md":             changelogMD,
		"pyproject.toml":           pyprojectTOML,
		".gitignore":               gitignore,
		".env":                     envFile(p),
		"src/invoicer/__init__.py": initPy,
		"src/invoicer/money.py":    moneyPy,
		"src/invoicer/tax.py":      taxPy,
		"src/invoicer/report.py":   reportPy,
		"src/invoicer/cli.py":      cliPy,
		"tests/test_money.py":      testMoneyPy,
		"tests/test_report.py":     testReportPy,
		"tests/test_cli.py":        testCliPy,
		"data/2025-01.csv":         p.months[0].csv(",", false),
		"data/2025-02.csv":         p.months[1].csv(",", false),
		"data/2025-03.csv":         p.months[2].csv(",", false),
		"data/2025-03-de.csv":      p.de.csv(";", true),
	})
	b := &builder{r: r, ws: ws, s: s, now: start}
	b.story(p)
	return s
}

func envFile(p *project) string {
	return "# Local settings for the billing export job. Do not commit.\n" +
		"BILLING_EXPORT_URL=http://localhost:8080/export\n" +
		"BILLING_EXPORT_LOCALE=per-customer\n" +
		"STRIPE_SECRET_KEY=" + p.stripeKey + "\n" +
		"DATABASE_URL=postgres://invoicer:" + p.dbPassword + "@localhost:5432/invoicer\n"
}

// story is the session: the bug report, the investigation, the user's
// decision, the fix with a failing and a passing test run, a lint fix, the
// user's follow-ups (older months, a second export format) and the commits.
func (b *builder) story(p *project) {
	march := p.months[2]
	big := p.bigRow
	b.user(fmt.Sprintf("The invoice report is broken: `invoicer report --month %s data/%s.csv` crashes on the new export. "+
		"February's report runs, but finance says its EU figures are way off, and in the older months the VAT is off by a cent here and there "+
		"compared to their spreadsheet. Can you find out why and fix it? The CSV format itself is fixed: the export job writes it.",
		march.name, march.name))

	b.say("The user reports three symptoms: a crash on the March export, wrong EU figures in February, and VAT off by a cent. "+
		"All three point at how amounts are parsed and summed. Start with the layout and the tests.",
		"I'll start by looking at the project layout, then reproduce the crash.",
		find("**/*.py"))
	b.say("", "", shell("ls -a", "List the repository root", lsRoot(b.ws), 0))
	b.say("", "", read("README.md"), read("pyproject.toml"))
	if b.r.IntN(2) == 0 {
		b.say("", "", shell("git log --oneline -5", "Show recent commits",
			"4f1c9a2 Add --early-payment discount\n9b27e0d Report VAT and gross per country\n51d3c8e Read the billing export CSV\n0a6f2b1 First release: net per country\n", 0))
	}
	b.say("", "Let me run the test suite first to see where things stand.",
		shell("python -m pytest -q", "Run the test suite", "/home/dev/src/invoicer/.venv/bin/python: No module named pytest\n", 1))
	b.say("The virtualenv has no pytest: the dev extras are not installed. Install the project with its dev extras.",
		"The virtualenv doesn't have the dev dependencies yet. Installing the project in editable mode with its `dev` extras:",
		shell("pip install -e '.[dev]'", "Install the project and its dev dependencies", pipInstall, 0))
	b.say("", "", shell("python --version && pip show click | head -2", "Check the Python and click versions", "Python 3.12.3\nName: click\nVersion: 8.1.7\n", 0))
	b.say("", "", shell("python -m pytest -q", "Run the test suite", ".......                                                                  [100%]\n7 passed in 0.09s\n", 0))
	b.say("", "All 7 tests pass, so they don't cover the failing case. Reproducing the crash:",
		shell(fmt.Sprintf("invoicer report --month %s data/%s.csv", march.name, march.name), "Reproduce the crash", crashTrace(b.ws, big), 1))
	b.say(fmt.Sprintf("ValueError on '%s': parse_amount strips every comma and hands the rest to float(). "+
		"For %q that leaves two dots. And a smaller EU amount like \"1.234,50\" becomes \"1.23450\", i.e. 1.2345, while \"476,83\" becomes 47683: that's February's EU figures.",
		strings.ReplaceAll(big.text, ",", ""), big.text),
		"", read("src/invoicer/money.py"))
	b.say("", "", search(`parse_amount|float\(`, "src", "tests"))
	b.say("", "", read("src/invoicer/report.py"))
	b.say("", "Now the data the export wrote:",
		shell(fmt.Sprintf("head -8 data/%s.csv", march.name), "Show the first rows of the March export", head(b.ws.files["data/"+march.name+".csv"], 8), 0))
	b.say("", "", shell(fmt.Sprintf(`awk -F, 'NR > 1 { print $3 }' data/%s.csv | sort | uniq -c`, march.name), "Count invoice lines per country",
		countByCountry(march), 0))
	if b.r.IntN(2) == 0 {
		b.say("", "", shell("ls -l data/", "List the export files", lsData(b.ws), 0))
	}
	b.say("", "", plan(
		PlanItem{"Reproduce the crash and find why EU amounts read wrong", "completed"},
		PlanItem{"Parse both amount formats into Decimal", "in_progress"},
		PlanItem{"Round VAT per line as finance does", "pending"},
		PlanItem{"Add tests for EU amounts and rounding", "pending"},
		PlanItem{"Run the report on March and the earlier months", "pending"},
	))
	b.say("", "", read("src/invoicer/tax.py"), read("src/invoicer/cli.py"))
	b.say("", "", read("tests/test_money.py"), read("tests/test_report.py"))
	b.say("", "", read("tests/test_cli.py"))
	b.say("", "", search(`== [0-9]+\.[0-9]+`, "tests"))
	b.say("Two separate problems. (1) Parsing: the export now writes amounts in the customer's locale, so a decimal comma is "+
		"read as a thousands separator. (2) Money as float: VAT is summed unrounded and rounded once on the total, while invoices "+
		"round VAT per line, so totals drift by a cent. Decimal fixes the drift; which rounding finance uses is a business rule: ask.",
		fmt.Sprintf("I found the cause. Two separate problems:\n\n"+
			"1. **Parsing.** `parse_amount` removes every comma and calls `float()`. The new export writes amounts in the customer's locale, "+
			"so `1.234,50` becomes `1.23450` = 1.2345 and `476,83` becomes 47683 (February's EU figures), and `%s` becomes `%s`, which `float()` rejects (the crash).\n"+
			"2. **Rounding.** Amounts are floats, VAT is summed unrounded and only the total is rounded. Invoices round VAT per line, "+
			"so the totals drift by a cent.\n\n"+
			"I'd switch money to `Decimal`, parse both separators (the last `.` or `,` followed by at most two digits is the decimal separator), "+
			"and round VAT per line. Which rounding does finance use for the half cent: half-up or banker's rounding?",
			big.text, strings.ReplaceAll(big.text, ",", "")))

	b.note("<system-reminder>\nThe user opened the file src/invoicer/money.py in the IDE. This may or may not be related to the current task.\n</system-reminder>")
	b.user("Go with Decimal. Finance rounds half-up, per line item, never on the total. And no new dependencies for the parsing, the standard library is enough.")
	b.say("Decided: Decimal, half-up per line, stdlib only. Check how quantize rounds by default before writing round_cents.",
		"Understood: `Decimal`, half-up per line, standard library only. Let me check the `decimal` docs for `quantize`'s default rounding.",
		&Call{Tool: ToolFetch, URL: "https://docs.python.org/3/library/decimal.html#decimal.Decimal.quantize",
			Prompt: "What rounding does Decimal.quantize use when none is given, and how do I round half up?", Output: decimalDocs})
	b.say("", "", plan(
		PlanItem{"Reproduce the crash and find why EU amounts read wrong", "completed"},
		PlanItem{"Parse both amount formats into Decimal", "in_progress"},
		PlanItem{"Round VAT per line, half up", "pending"},
		PlanItem{"Add tests for EU amounts and rounding", "pending"},
		PlanItem{"Run the report on March and the earlier months", "pending"},
	))
	b.say("", "Rewriting `money.py` around `Decimal`:", edit("src/invoicer/money.py", moneyPy, moneyDecimal))
	b.say("", "", edit("src/invoicer/tax.py", `"""VAT rates by customer country, in percent."""
`, `"""VAT rates by customer country, in percent."""

from decimal import Decimal
`))
	b.say("", "", edit("src/invoicer/tax.py", `    """Return the VAT rate of country as a fraction (0.19 for 19%)."""
    try:
        return VAT_RATES[country] / 100`, `    """Return the VAT rate of country as a Decimal fraction (0.19 for 19%)."""
    try:
        return Decimal(VAT_RATES[country]) / 100`))
	b.say("", "Now the report: sums in `Decimal`, VAT rounded per line.", edit("src/invoicer/report.py", `import csv
from collections import defaultdict

from .money import format_amount, parse_amount
`, `import csv
from collections import defaultdict
from decimal import Decimal

from .money import CENT, format_amount, parse_amount, round_cents
`))
	b.say("", "", edit("src/invoicer/report.py", `    """Sum net and VAT per country."""
    totals = defaultdict(lambda: {"net": 0.0, "vat": 0.0})
    for row in rows:
        net = parse_amount(row["net"])
        t = totals[row["country"]]
        t["net"] += net
        t["vat"] += net * vat_rate(row["country"])`, `    """Sum net and VAT per country. VAT is rounded per line, as on the invoices."""
    totals = defaultdict(lambda: {"net": Decimal(0), "vat": Decimal(0)})
    for row in rows:
        net = parse_amount(row["net"])
        t = totals[row["country"]]
        t["net"] += net
        t["vat"] += round_cents(net * vat_rate(row["country"]))`))
	b.say("", "", edit("src/invoicer/report.py", `    grand = {"net": 0.0, "vat": 0.0}`, `    grand = {"net": Decimal(0), "vat": Decimal(0)}`))
	b.say("", "And tests for the new parsing and the rounding:", edit("tests/test_money.py", `from invoicer.money import format_amount, parse_amount
`, `from decimal import Decimal

import pytest

from invoicer.money import format_amount, parse_amount, round_cents
`))
	b.say("", "", edit("tests/test_money.py", `def test_format():
    assert format_amount(1234.5) == "1,234.50"
`, `def test_format():
    assert format_amount(1234.5) == "1,234.50"


def test_parse_eu():
    assert parse_amount("1.234,50") == Decimal("1234.50")


def test_parse_eu_millions():
    assert parse_amount("1.234.567,00") == Decimal("1234567.00")


def test_parse_no_decimals():
    assert parse_amount("1,234") == Decimal("1234")


def test_round_half_up():
    assert round_cents(Decimal("2.665")) == Decimal("2.67")


def test_parse_rejects_garbage():
    with pytest.raises(ValueError, match="not an amount"):
        parse_amount("12 EUR")
`))
	b.say("", "", shell("python -m pytest -q", "Run the test suite", pytestFail(b.ws), 1))
	b.say("Three failures. test_round_half_up: quantize without rounding= uses the context's ROUND_HALF_EVEN, as the docs said; "+
		"round_cents must pass ROUND_HALF_UP. test_format passes a float, which has no quantize: the test should pass a Decimal. "+
		"test_cli: the early-payment discount is a float multiplied into a Decimal.",
		"Three failures, all expected from the switch:\n\n"+
			"- `test_round_half_up`: `quantize` without `rounding=` uses the context's default, `ROUND_HALF_EVEN`, so 2.665 became 2.66. "+
			"`round_cents` has to ask for `ROUND_HALF_UP`.\n"+
			"- `test_format`: the test passes a float; amounts are `Decimal` now.\n"+
			"- `test_report_early_payment`: `EARLY_PAYMENT_DISCOUNT` is still a float, and `Decimal *= float` is a `TypeError`.",
		readLines("src/invoicer/money.py", b.ws.line("src/invoicer/money.py", "def round_cents"), 9))
	b.say("", "", edit("src/invoicer/money.py", `    return value.quantize(CENT)`, `    return value.quantize(CENT, rounding=ROUND_HALF_UP)`))
	b.say("", "", edit("tests/test_money.py", `    assert format_amount(1234.5) == "1,234.50"`, `    assert format_amount(Decimal("1234.5")) == "1,234.50"`))
	b.say("", "", search(`EARLY_PAYMENT_DISCOUNT|\b0\.[0-9]+\b`, "src"))
	b.say("", "", edit("src/invoicer/cli.py", `import click
`, `from decimal import Decimal

import click
`), edit("src/invoicer/cli.py", `EARLY_PAYMENT_DISCOUNT = 0.02`, `EARLY_PAYMENT_DISCOUNT = Decimal("0.02")`))
	b.say("", "", shell("python -m pytest -q", "Run the test suite", "............                                                             [100%]\n12 passed in 0.11s\n", 0))
	b.say("", "A quick check of the parser on the shapes the export writes:",
		shell(`python -c "from invoicer.money import parse_amount as p; print([p(s) for s in ['1,234.50', '1.234,50', '1.234.567,00', '12,5', '980']])"`,
			"Try parse_amount on both locales", "[Decimal('1234.50'), Decimal('1234.50'), Decimal('1234567.00'), Decimal('12.5'), Decimal('980.0')]\n", 0))
	b.say("", "All green. Now the March report that crashed:",
		shell(fmt.Sprintf("invoicer report --month %s data/%s.csv", march.name, march.name), "Run the March report", march.reportFixed(), 0))
	b.say("The report works. The export job's settings may say why the locale changed: check .env.",
		"March reports now. The export switched to per-customer locales at some point; let me check the export job's local settings to confirm.",
		shell("cat .env", "Show the export job's local settings", b.ws.files[".env"], 0))
	b.say("BILLING_EXPORT_LOCALE=per-customer confirms the cause. The file also holds a Stripe key and a database password: "+
		"never repeat them, and make sure .env cannot be committed.",
		"`BILLING_EXPORT_LOCALE=per-customer` confirms it. That file also holds a Stripe key and the database password, "+
			"so I'll make sure it can't be committed:",
		shell("git check-ignore -v .env || echo 'not ignored'", "Check whether .env is ignored", "not ignored\n", 0))
	b.say("", "", edit(".gitignore", `.ruff_cache/
`, `.ruff_cache/
.env
`))
	b.user("While you're at it: keep the report's column layout exactly as it is, finance's spreadsheet parses it by position.")
	b.say("The layout is unchanged: render still pads with the same widths; only the values changed. Confirm with the diff of report.py.",
		"The layout stays as it is: `render` still pads each column to the same width, only the numbers change. Here's the diff of `report.py` to confirm:",
		shell("git diff src/invoicer/report.py", "Show the report.py diff", gitDiff(b.ws, "src/invoicer/report.py", reportPy), 0))
	b.say("", "", shell("git status --short", "Show what changed", gitStatus(b.ws), 0))
	b.say("", "", shell("ruff check src tests", "Lint", ruffF401(b.ws), 1))
	b.say("", "`CENT` is imported but unused in `report.py`; removing it.", edit("src/invoicer/report.py",
		`from .money import CENT, format_amount, parse_amount, round_cents`,
		`from .money import format_amount, parse_amount, round_cents`))
	b.say("", "", shell("ruff check src tests", "Lint", "All checks passed!\n", 0))
	b.say("", "", shell("git diff src/invoicer/money.py", "Review the money.py diff", gitDiff(b.ws, "src/invoicer/money.py", moneyPy), 0))
	b.say("", "", shell("ruff format --check src tests", "Check formatting", "7 files already formatted\n", 0))
	b.say("", "", plan(
		PlanItem{"Reproduce the crash and find why EU amounts read wrong", "completed"},
		PlanItem{"Parse both amount formats into Decimal", "completed"},
		PlanItem{"Round VAT per line, half up", "completed"},
		PlanItem{"Add tests for EU amounts and rounding", "completed"},
		PlanItem{"Run the report on March and the earlier months", "in_progress"},
	))
	b.say("", "Fixed. Summary:\n\n"+
		"- `money.py`: amounts are `Decimal`; `parse_amount` reads `1,234.50`, `1.234,50` and `1.234.567,00` "+
		"(the last separator followed by at most two digits is the decimal one) and rejects anything else with a `ValueError`; "+
		"`round_cents` rounds half-up.\n"+
		"- `report.py`: VAT is rounded per line and summed in `Decimal`.\n"+
		"- `tax.py`, `cli.py`: rates and the early-payment discount are `Decimal`.\n"+
		"- 5 new tests; 12 pass, ruff is clean. `.env` is now in `.gitignore` (it holds live credentials for the export job).\n\n"+
		"The March report runs again. I haven't re-run January and February yet.")

	jan, feb := p.months[0], p.months[1]
	b.user("Thanks. Please run January and February too and tell me whether the totals changed. And add a test for the crash with the actual row from the March file.")
	b.say("", "", shell(fmt.Sprintf("invoicer report --month %s data/%s.csv", jan.name, jan.name), "Run the January report", jan.reportFixed(), 0),
		shell(fmt.Sprintf("invoicer report --month %s data/%s.csv", feb.name, feb.name), "Run the February report", feb.reportFixed(), 0))
	b.say("", "To compare, the same two months with the code before my change:",
		shell(fmt.Sprintf("git stash -q && invoicer report --month %s data/%s.csv && invoicer report --month %s data/%s.csv; git stash pop -q",
			jan.name, jan.name, feb.name, feb.name), "Run both months on the old code",
			jan.reportFloat()+feb.reportFloat(), 0))
	b.say("", "", shell(fmt.Sprintf("grep -n '%s' data/%s.csv", big.invoice, march.name), "Find the row that crashed", grepRow(b.ws, "data/"+march.name+".csv", big.invoice), 0))
	b.say("", "", edit("tests/test_report.py", `def test_render_has_total_line():`, fmt.Sprintf(`def test_eu_million_amount():
    # The March export's row that crashed the report (float("%s")).
    rows = [{"invoice": "%s", "customer": "%s", "country": "%s", "net": "%s"}]
    assert totals_by_country(rows)["%s"]["net"] == Decimal("%s")


def test_render_has_total_line():`, strings.ReplaceAll(big.text, ",", ""), big.invoice, big.customer, big.country, big.text, big.country, plainCents(big.cents))))
	b.say("", "", edit("tests/test_report.py", `from invoicer.report import render, totals_by_country
`, `from decimal import Decimal

from invoicer.report import render, totals_by_country
`))
	b.say("", "", shell("python -m pytest -q tests/test_report.py", "Run the report tests", "...                                                                      [100%]\n3 passed in 0.05s\n", 0))
	b.say("", compareMonths(jan, feb))

	de := p.de
	b.note("<system-reminder>\nThe user opened the file data/2025-03-de.csv in the IDE. This may or may not be related to the current task.\n</system-reminder>")
	b.user(fmt.Sprintf("Good. One more while you're in there: the German entity's export (data/%s-de.csv) is semicolon-separated and starts with a BOM, and the report fails on it. Can the reader take both formats?", de.name))
	b.say("", "", shell(fmt.Sprintf("head -c 64 data/%s-de.csv | od -c | head -4", de.name), "Show the first bytes of the German export", odHead(b.ws.files["data/"+de.name+"-de.csv"]), 0))
	b.say("", "", shell(fmt.Sprintf("invoicer report --month %s data/%s-de.csv", de.name, de.name), "Run the report on the German export", keyErrorTrace(b.ws), 1))
	b.say("The header key is the whole first line with a BOM in front: DictReader splits on commas and utf-8 keeps the BOM. "+
		"Open with utf-8-sig and sniff the delimiter.",
		"The BOM (`357 273 277`) stays in the first key with `encoding=\"utf-8\"`, and with the default comma delimiter the whole "+
			"header is one column, hence `KeyError: 'invoice'`. I'll read with `utf-8-sig` and let `csv.Sniffer` pick the delimiter.",
		readLines("src/invoicer/report.py", 1, 16))
	b.say("", "", edit("src/invoicer/report.py", `    """Read the billing export: one dict per invoice line."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))`, `    """Read the billing export: one dict per invoice line.

    The export is comma-separated, or semicolon-separated from the German
    entity, with or without a byte-order mark.
    """
    with open(path, newline="", encoding="utf-8-sig") as f:
        sample = f.read(4096)
        f.seek(0)
        dialect = csv.Sniffer().sniff(sample)
        return list(csv.DictReader(f, dialect=dialect))`))
	b.say("", "", write("tests/test_load.py", testLoadPy))
	b.say("", "", shell("python -m pytest -q tests/test_load.py", "Run the new reader tests", pytestSniffFail(b.ws, 1), 1))
	b.say("", "", shell("python -m pytest -q", "Run the test suite", pytestSniffFail(b.ws, 14), 1))
	b.say("The sniffer guessed wrong on the comma file: quoted EU amounts contain commas and dots, and without a candidate list it "+
		"considers every character. Restrict it to the two delimiters the export uses.",
		"`csv.Sniffer` guessed on the comma file: the quoted EU amounts contain both `.` and `,`. Let me check its signature to restrict the candidates.",
		shell(`python -c "import csv, inspect; print(inspect.signature(csv.Sniffer.sniff))"`, "Show csv.Sniffer.sniff's signature", "(self, sample, delimiters=None)\n", 0))
	b.say("", "", edit("src/invoicer/report.py", `        dialect = csv.Sniffer().sniff(sample)`, `        dialect = csv.Sniffer().sniff(sample, delimiters=",;")`))
	b.say("", "", shell("python -m pytest -q tests/test_load.py", "Run the reader tests", "..                                                                       [100%]\n2 passed in 0.04s\n", 0))
	b.say("", "", shell("python -m pytest -q", "Run the test suite", "...............                                                          [100%]\n15 passed in 0.13s\n", 0))
	b.say("", "", shell(fmt.Sprintf("invoicer report --month %s data/%s-de.csv", de.name, de.name), "Run the report on the German export", de.reportFixed(), 0),
		shell("ruff check src tests", "Lint", "All checks passed!\n", 0))
	b.say("", fmt.Sprintf("The reader now takes both: `utf-8-sig` drops the BOM, and `csv.Sniffer` restricted to `,` and `;` picks the delimiter. "+
		"Two new tests in `tests/test_load.py` (comma with quoted EU amounts, semicolons with a BOM); all 15 pass, and the German export reports %s net.",
		cents(sumCents(de))))

	b.user("Perfect. Add it to the changelog as 0.3.1 and commit: the amounts fix and the CSV reader as two separate commits.")
	b.say("", "", read("CHANGELOG.md"))
	b.say("", "", edit("CHANGELOG.md", "# Changelog\n", "# Changelog\n\n## 0.3.1\n"+
		"- Amounts are Decimal: the export's locale-formatted amounts (`1.234,50`) are read correctly, and VAT is rounded half-up per line.\n"+
		"- The reader takes semicolon-separated exports and a byte-order mark.\n"))
	b.say("", "", edit("pyproject.toml", `version = "0.3.0"`, `version = "0.3.1"`), edit("src/invoicer/__init__.py", `__version__ = "0.3.0"`, `__version__ = "0.3.1"`))
	b.say("", "The README should say which exports the reader takes:", readLines("README.md", 6, 4))
	b.say("", "", edit("README.md", "The CSV comes from the billing export job: one row per invoice line,\n", "The CSV comes from the billing export job: one row per invoice line,\n"+
		"comma- or semicolon-separated, with amounts in either `1,234.50` or `1.234,50` form:\n"))
	b.say("", "", shell("git diff --stat", "Summarize the changes", gitDiffStat(b.ws), 0))
	// The first commit takes report.py without the reader's change: the
	// hunks of load_rows are answered "n" to git add -p.
	report := b.ws.files["src/invoicer/report.py"]
	amountsOnly := strings.Replace(report, function(report, "load_rows"), function(reportPy, "load_rows"), 1)
	var answers []string
	for _, h := range diffLines(reportPy, report) {
		a := "y"
		if strings.Contains(strings.Join(h.Lines, "\n"), "utf-8") {
			a = "n"
		}
		answers = append(answers, a)
	}
	first := []string{".gitignore", "src/invoicer/cli.py", "src/invoicer/money.py", "src/invoicer/report.py", "src/invoicer/tax.py", "tests/test_money.py", "tests/test_report.py"}
	msg1 := "Read amounts as Decimal in both locales; round VAT half-up per line"
	msg2 := "Read semicolon-separated exports and a BOM; release 0.3.1"
	hash1, hash2 := b.hash(), b.hash()
	out1 := b.ws.commit(first, map[string]string{"src/invoicer/report.py": amountsOnly})
	out2 := b.ws.commit(nil, nil)
	b.say("", "", shell(fmt.Sprintf("git add %s && printf '%s\\n' | git add -p src/invoicer/report.py > /dev/null && git commit -m '%s'",
		strings.Join(slices.DeleteFunc(slices.Clone(first), func(f string) bool { return f == "src/invoicer/report.py" }), " "), strings.Join(answers, "\\n"), msg1),
		"Commit the amounts fix", fmt.Sprintf("[%s %s] %s\n%s", b.s.Branch, hash1, msg1, out1), 0))
	b.say("", "", shell(fmt.Sprintf("git add -A && git commit -m '%s'", msg2), "Commit the CSV reader",
		fmt.Sprintf("[%s %s] %s\n%s", b.s.Branch, hash2, msg2, out2), 0))
	b.say("", "", shell("git log --oneline -3", "Show the new commits", fmt.Sprintf("%s %s\n%s %s\n4f1c9a2 Add --early-payment discount\n", hash2, msg2, hash1, msg1), 0))
	b.say("", "", shell("git status --short", "Check the tree is clean", "", 0))
	b.say("", fmt.Sprintf("Committed on `fix/eu-amounts`:\n\n1. `%s` %s\n2. `%s` %s\n\n", hash1, msg1, hash2, msg2)+
		"`.env` stays out of git. One thing to follow up outside this repo: the Stripe key and database password in `.env` were printed in this session's output, so consider rotating them.")
}
