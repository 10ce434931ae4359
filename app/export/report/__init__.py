"""The report a partner reads: gathered as plain data (gather.py), drawn (figures.py), written as HTML
from Jinja2 templates (resources/report/) and as PDF from that same HTML (render.py)."""

from app.export.report.render import first_page_png, pdf_document, report_html, write_html, write_pdf

__all__ = ["first_page_png", "pdf_document", "report_html", "write_html", "write_pdf"]
