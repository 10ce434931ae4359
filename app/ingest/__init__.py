"""What comes into a project and how Assay reads it: contracts (.txt, .md, .pdf, .docx, scans
through OCR) cut into passages with stable citation ids, datasets of questions and answers, other
raters' labels, the citations an answer writes, and the data points an answer is cut into.
"""
