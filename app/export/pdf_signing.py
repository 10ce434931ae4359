"""The signed report: a PDF signed (PAdES, with pyHanko) by the exporting reviewer.

The signature is ECDSA P-256 over SHA-256, which poppler's `pdfsig`, Acrobat and other readers
validate (Ed25519 is poorly supported in PDF readers): the reviewer's report-signing key is kept
beside their Ed25519 key (app/keys.py). Its certificate is self-signed, naming the reviewer and the
fingerprint of their Ed25519 key, or issued by the firm's CA when its certificate and key are given,
so a reader that trusts the firm's CA trusts the report. Everything that can fail (passphrase,
keyring, a CA certificate that does not match its key) is checked before the report is written.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from app.errors import InvalidInput
from app.keys import LocalKey, create_key, key_folder, local_keys, report_key

CA_PASSPHRASE_ENV = "ASSAY_CA_PASSPHRASE"  # the firm CA key's passphrase, when it has one
FIELD = "AssayReviewer"
YEARS = 3


@dataclass(frozen=True)
class ReportSigner:
    """What signs a report: the reviewer's report key, its certificate and the CA's above it."""

    reviewer: str
    fingerprint: str  # of the reviewer's Ed25519 key, named in the certificate
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    chain: tuple[x509.Certificate, ...] = ()
    key_created: bool = False  # the reviewer had no key on this computer: one was made


def _name(reviewer: str, fingerprint: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, reviewer),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Assay reviewer"),
            x509.NameAttribute(NameOID.SERIAL_NUMBER, fingerprint),
        ]
    )


def _certificate(
    subject: x509.Name,
    public: ec.EllipticCurvePublicKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey,
    *,
    ca: bool = False,
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=True,  # non-repudiation: a signature the reviewer stands behind
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=365 * YEARS))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .sign(issuer_key, hashes.SHA256())
    )


CAKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def _load_ca(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, CAKey]:
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except OSError as exc:
        raise InvalidInput(str(cert_path), f"cannot read the certificate: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise InvalidInput(str(cert_path), "it is not a PEM certificate") from exc
    passphrase = os.environ.get(CA_PASSPHRASE_ENV)
    try:
        key = serialization.load_pem_private_key(
            key_path.read_bytes(), password=passphrase.encode() if passphrase else None
        )
    except OSError as exc:
        raise InvalidInput(str(key_path), f"cannot read the key: {exc.strerror or exc}") from exc
    except TypeError as exc:
        raise InvalidInput(str(key_path), f"the key is encrypted: set {CA_PASSPHRASE_ENV} to its passphrase") from exc
    except ValueError as exc:
        raise InvalidInput(str(key_path), "it is not a PEM private key, or its passphrase is wrong") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise InvalidInput(str(key_path), "the CA key must be ECDSA or RSA")
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(serialization.Encoding.DER, public) != cert.public_key().public_bytes(
        serialization.Encoding.DER, public
    ):
        raise InvalidInput(str(cert_path), f"the certificate does not match the key {key_path}")
    return cert, key


def report_signer(reviewer: str, ca_cert: Path | None = None, ca_key: Path | None = None) -> ReportSigner:
    """The reviewer's report signer: their key unlocked (made when they have none) and a certificate
    for it (self-signed, kept in the key folder, or issued now by the CA given). KeyProblem or
    InvalidInput when it cannot be."""
    if (ca_cert is None) != (ca_key is None):
        raise InvalidInput("--cert", "give the CA's certificate and its key together (--cert and --cert-key)")
    ca = _load_ca(ca_cert, ca_key) if ca_cert is not None and ca_key is not None else None
    mine = local_keys(reviewer)
    key: LocalKey = mine[-1] if mine else create_key(reviewer)
    private = report_key(key)
    subject = _name(reviewer, key.fingerprint)
    if ca is not None:
        issued = _certificate(subject, private.public_key(), ca[0].subject, ca[1])
        return ReportSigner(reviewer, key.fingerprint, private, issued, (ca[0],), not mine)
    path = key_folder() / f"{key.fingerprint}.pdf.crt"
    cert: x509.Certificate | None = None
    if path.exists():
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        if cert.public_key() != private.public_key() or cert.not_valid_after_utc < dt.datetime.now(dt.UTC):
            cert = None
    if cert is None:
        cert = _certificate(subject, private.public_key(), subject, private)
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return ReportSigner(reviewer, key.fingerprint, private, cert, (), not mine)


def sign_pdf(path: Path, signer: ReportSigner, reason: str = "Reviewed and signed with Assay") -> None:
    """Sign the PDF in place (PAdES baseline B, SHA-256): written beside it, then put in its place."""
    from asn1crypto import keys as asn1_keys
    from asn1crypto import x509 as asn1_x509
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers
    from pyhanko_certvalidator.registry import SimpleCertificateStore

    der = serialization.Encoding.DER
    key = asn1_keys.PrivateKeyInfo.load(
        signer.key.private_bytes(der, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    cert = asn1_x509.Certificate.load(signer.certificate.public_bytes(der))
    chain = [asn1_x509.Certificate.load(c.public_bytes(der)) for c in signer.chain]
    pdf_signer = signers.SimpleSigner(
        signing_cert=cert, signing_key=key, cert_registry=SimpleCertificateStore.from_certs([cert, *chain])
    )
    meta = signers.PdfSignatureMetadata(
        field_name=FIELD,
        md_algorithm="sha256",
        subfilter=fields.SigSeedSubFilter.PADES,
        reason=reason,
        name=signer.reviewer,
    )
    handle, temporary = tempfile.mkstemp(prefix=".signing-", suffix=".pdf", dir=path.parent)
    try:
        with path.open("rb") as source, os.fdopen(handle, "wb") as out:
            signers.sign_pdf(IncrementalPdfFileWriter(source, strict=False), meta, signer=pdf_signer, output=out)
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)


def validate_pdf(path: Path, trust: list[x509.Certificate]) -> tuple[bool, str]:
    """pyHanko's check of the PDF's signatures against the certificates trusted: (all valid, summary)."""
    from asn1crypto import x509 as asn1_x509
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext

    roots = [asn1_x509.Certificate.load(c.public_bytes(serialization.Encoding.DER)) for c in trust]
    with path.open("rb") as file:
        reader = PdfFileReader(file, strict=False)
        signatures = reader.embedded_signatures
        if not signatures:
            return False, "the PDF is not signed"
        results = [validate_pdf_signature(s, ValidationContext(trust_roots=roots)) for s in signatures]
    ok = all(r.intact and r.valid and r.trusted for r in results)
    return ok, "; ".join(r.summary() for r in results)
