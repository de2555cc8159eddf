package sample

// The project's files as the session finds them.

const readmeMD = `# invoicer

Monthly invoice reports for the finance team.

    pip install -e '.[dev]'
    invoicer report --month 2025-03 data/2025-03.csv

The CSV comes from the billing export job: one row per invoice line,
` + "`invoice,customer,country,net`" + `. VAT is charged per line at the
customer's country rate (see ` + "`src/invoicer/tax.py`" + `).

Run the tests with ` + "`python -m pytest -q`" + `.
`

const pyprojectTOML = `[project]
name = "invoicer"
version = "0.3.0"
description = "Monthly invoice reports from the billing export"
requires-python = ">=3.10"
dependencies = ["click>=8.1"]

[project.optional-dependencies]
dev = ["pytest>=8", "ruff>=0.6"]

[project.scripts]
invoicer = "invoicer.cli:main"

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]

[tool.ruff]
line-length = 120
`

const initPy = `"""invoicer: monthly invoice reports from the billing export."""

__version__ = "0.3.0"
`

const moneyPy = `"""Parsing and formatting of money amounts."""


def parse_amount(text):
    """Return the amount in text ("1,234.50") as a float."""
    return float(text.strip().replace(",", ""))


def format_amount(value):
    """Format value with two decimals and thousands separators."""
    return f"{value:,.2f}"
`

const taxPy = `"""VAT rates by customer country, in percent."""

VAT_RATES = {
    "DE": 19,
    "FR": 20,
    "IT": 22,
    "ES": 21,
    "NL": 21,
    "IE": 23,
    "US": 0,
}


def vat_rate(country):
    """Return the VAT rate of country as a fraction (0.19 for 19%)."""
    try:
        return VAT_RATES[country] / 100
    except KeyError:
        raise ValueError(f"no VAT rate for country {country!r}") from None
`

const reportPy = `"""The monthly report: net, VAT and gross per country."""

import csv
from collections import defaultdict

from .money import format_amount, parse_amount
from .tax import vat_rate


def load_rows(path):
    """Read the billing export: one dict per invoice line."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def totals_by_country(rows):
    """Sum net and VAT per country."""
    totals = defaultdict(lambda: {"net": 0.0, "vat": 0.0})
    for row in rows:
        net = parse_amount(row["net"])
        t = totals[row["country"]]
        t["net"] += net
        t["vat"] += net * vat_rate(row["country"])
    return dict(totals)


def render(totals, month):
    """Render the totals as the text table finance reads."""
    lines = [f"Invoice report {month}", "", f"{'country':<8}{'net':>14}{'vat':>12}{'gross':>14}"]
    grand = {"net": 0.0, "vat": 0.0}
    for country in sorted(totals):
        t = totals[country]
        net, vat, gross = (format_amount(v) for v in (t["net"], t["vat"], t["net"] + t["vat"]))
        lines.append(f"{country:<8}{net:>14}{vat:>12}{gross:>14}")
        grand["net"] += t["net"]
        grand["vat"] += t["vat"]
    net, vat, gross = (format_amount(v) for v in (grand["net"], grand["vat"], grand["net"] + grand["vat"]))
    lines.append(f"{'total':<8}{net:>14}{vat:>12}{gross:>14}")
    return "\n".join(lines) + "\n"
`

const cliPy = `"""Command line: invoicer report --month YYYY-MM FILE."""

import click

from .report import load_rows, render, totals_by_country

EARLY_PAYMENT_DISCOUNT = 0.02


@click.group()
@click.version_option()
def main():
    """Monthly invoice reports."""


@main.command()
@click.option("--month", required=True, help="The month to report, YYYY-MM.")
@click.option("--early-payment", is_flag=True, help="Apply the early-payment discount to net amounts.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def report(month, early_payment, path):
    """Print net, VAT and gross per country for one month."""
    rows = [r for r in load_rows(path) if r["invoice"].startswith(f"INV-{month}")]
    totals = totals_by_country(rows)
    if early_payment:
        for t in totals.values():
            t["net"] *= 1 - EARLY_PAYMENT_DISCOUNT
    click.echo(render(totals, month), nl=False)
`

const testMoneyPy = `from invoicer.money import format_amount, parse_amount


def test_parse_plain():
    assert parse_amount("12.50") == 12.5


def test_parse_thousands():
    assert parse_amount("1,234.50") == 1234.5


def test_parse_whitespace():
    assert parse_amount(" 7.00 ") == 7.0


def test_format():
    assert format_amount(1234.5) == "1,234.50"
`

const testReportPy = `from invoicer.report import render, totals_by_country

ROWS = [
    {"invoice": "INV-2025-01-0001", "customer": "Acme Tooling Inc", "country": "US", "net": "100.00"},
    {"invoice": "INV-2025-01-0002", "customer": "Brotwerk GmbH", "country": "DE", "net": "200.00"},
]


def test_totals():
    totals = totals_by_country(ROWS)
    assert totals["US"] == {"net": 100.0, "vat": 0.0}
    assert totals["DE"]["vat"] == 38.0


def test_render_has_total_line():
    out = render(totals_by_country(ROWS), "2025-01")
    assert out.splitlines()[-1].split() == ["total", "300.00", "38.00", "338.00"]
`

const testCliPy = `from click.testing import CliRunner

from invoicer.cli import main


def test_report_early_payment(tmp_path):
    csv_file = tmp_path / "x.csv"
    csv_file.write_text('invoice,customer,country,net\nINV-2025-02-0001,Acme Tooling Inc,US,"1,000.00"\n')
    result = CliRunner().invoke(main, ["report", "--month", "2025-02", "--early-payment", str(csv_file)])
    assert result.exit_code == 0, result.output
    assert "980.00" in result.output
`

const changelogMD = `# Changelog

## 0.3.0
- ` + "`--early-payment`" + ` applies the 2% early-payment discount to net amounts.

## 0.2.0
- The report shows VAT and gross per country.

## 0.1.0
- First release: net per country.
`

const gitignore = `__pycache__/
*.egg-info/
.venv/
.pytest_cache/
.ruff_cache/
`
