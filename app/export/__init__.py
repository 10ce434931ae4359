"""What leaves the project: the reviewed set as CSV, XLSX, JSONL, fine-tuning JSONL or an
HTML/PDF report, with personal data redacted on request.
"""
