"""The signed report: a PDF signed (PAdES, with pyHanko) by the exporting reviewer.

The signature is ECDSA P-256 over SHA-256, which poppler's `pdfsig`, Acrobat and other readers
validate (Ed25519 is poorly supported in PDF readers): the reviewer's report-signing key is kept
beside their Ed25519 key (app/keys.py). Its certificate is self-signed, naming the reviewer and the
fingerprint of their Ed25519 key, or issued by the firm's CA when its certificate and key are given,
so a reader that trusts the firm's CA trusts the report. Everything that can fail (passphrase,
keyring, a CA certificate that does not match its key) is checked before the report is written.

Anyone can make a self-signed certificate under a reviewer's name, so the certificate also carries
the reviewer's Ed25519 signature of its key (BINDING_OID), which `check_report` verifies with the key
the project registered to them. pdfsig checks only the signed byte range; `check_report` also asks
pyHanko what the signature covers, so a revision appended after it (a replaced page) is a change.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from app import limits
from app.errors import InvalidInput
from app.keys import KeyProblem, create_key, key_folder, local_keys, report_key, signer, signing_key
from storage.reviewer_keys import RegisteredKey, unb64

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

CA_PASSPHRASE_ENV = "ASSAY_CA_PASSPHRASE"  # the firm CA key's passphrase, when it has one
FIELD = "AssayReviewer"
YEARS = 3
NAME_LIMIT = 64  # an X.509 common name (RFC 5280 ub-common-name), as UTF-8 bytes: what cryptography checks
# The certificate extension carrying the reviewer's Ed25519 signature of their report key (an OID
# made from a UUID, ITU-T X.667: no registration needed), and what that signature is over.
BINDING_OID = x509.ObjectIdentifier("2.25.25036381623890724416081851422173626981")
BINDING_CONTEXT = b"assay-report-key/1\0"


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
    binding: bytes | None = None,
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
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=365 * YEARS))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(usage, critical=True)
    )
    if binding is not None:
        from asn1crypto.core import OctetString

        builder = builder.add_extension(x509.UnrecognizedExtension(BINDING_OID, OctetString(binding).dump()), False)
    return builder.sign(issuer_key, hashes.SHA256())


CAKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def _load_ca(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, CAKey]:
    try:
        cert = x509.load_pem_x509_certificate(limits.read_bounded(cert_path, limits.CERTIFICATE, "a PEM certificate"))
    except ValueError as exc:
        raise InvalidInput(str(cert_path), "it is not a PEM certificate") from exc
    passphrase = os.environ.get(CA_PASSPHRASE_ENV)
    try:
        key = serialization.load_pem_private_key(
            limits.read_bounded(key_path, limits.CERTIFICATE, "a PEM private key"),
            password=passphrase.encode() if passphrase else None,
        )
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


def report_signer(
    reviewer: str,
    ca_cert: Path | None = None,
    ca_key: Path | None = None,
    retired: Collection[str] = (),
    *,
    session: Session | None = None,
) -> ReportSigner:
    """The reviewer's report signer: their key unlocked (made when they have none) and a certificate
    for it (self-signed, kept in the key folder, or issued now by the CA given), which carries their
    Ed25519 key's signature of it, so a check can tell it is theirs (`check_report`). With the
    project's `session`, the key is their key in force there (registered when it is their first,
    never a retired one: app/keys.py `signing_key`); `retired`: fingerprints that sign nothing.
    KeyProblem or InvalidInput when it cannot be."""
    if (ca_cert is None) != (ca_key is None):
        raise InvalidInput("--cert", "give the CA's certificate and its key together (--cert and --cert-key)")
    size = len(reviewer.encode("utf-8", "surrogatepass"))
    if size > NAME_LIMIT:  # X.509 holds a common name of at most 64 (cryptography counts UTF-8 bytes)
        raise InvalidInput(
            "--reviewer",
            f"a report is signed under a name of at most {NAME_LIMIT} bytes of UTF-8 (an accented letter takes "
            f"two), not {size}",
        )
    ca = _load_ca(ca_cert, ca_key) if ca_cert is not None and ca_key is not None else None
    held = local_keys(reviewer)
    mine = [k for k in held if k.fingerprint not in retired]
    if held and not mine:
        raise KeyProblem(f"{reviewer}'s signing key on this computer is retired in this project: it signs nothing more")
    if session is not None:
        in_force, created = signing_key(session, reviewer)
        key = next(k for k in local_keys(reviewer) if k.fingerprint == in_force.fingerprint)
    else:
        key, created = (mine[-1], False) if mine else (create_key(reviewer), True)
    private = report_key(key)
    binding = signer(key).sign(_binding_message(reviewer, private.public_key()))
    subject = _name(reviewer, key.fingerprint)
    if ca is not None:
        issued = _certificate(subject, private.public_key(), ca[0].subject, ca[1], binding=binding)
        return ReportSigner(reviewer, key.fingerprint, private, issued, (ca[0],), created)
    path = key_folder() / f"{key.fingerprint}.pdf.crt"
    cert: x509.Certificate | None = None
    if path.exists():
        try:
            cert = x509.load_pem_x509_certificate(limits.read_bounded(path, limits.CERTIFICATE, "a certificate"))
        except (InvalidInput, ValueError):
            cert = None  # made again below
        if cert is not None and (
            cert.public_key() != private.public_key()
            or cert.not_valid_after_utc < dt.datetime.now(dt.UTC)
            or _binding_of(cert) is None  # made before certificates carried the binding
        ):
            cert = None
    if cert is None:
        cert = _certificate(subject, private.public_key(), subject, private, binding=binding)
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return ReportSigner(reviewer, key.fingerprint, private, cert, (), created)


def _binding_message(reviewer: str, public: ec.EllipticCurvePublicKey) -> bytes:
    """What the reviewer's Ed25519 key signs to vouch for their report key: the name and the key."""
    spki = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return BINDING_CONTEXT + reviewer.encode("utf-8") + b"\0" + spki


def _binding_of(cert: x509.Certificate) -> bytes | None:
    """The Ed25519 signature a report certificate carries (None when it carries none)."""
    from asn1crypto.core import OctetString

    try:
        value = cert.extensions.get_extension_for_oid(BINDING_OID).value
    except x509.ExtensionNotFound:
        return None
    if not isinstance(value, x509.UnrecognizedExtension):
        return None
    try:
        signature = OctetString.load(value.value).native
    except ValueError:
        return None
    return signature if isinstance(signature, bytes) and len(signature) == 64 else None


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


@dataclass(frozen=True)
class ReportCheck:
    """What checking a signed report found: `valid` when every signature is intact, covers the whole
    file, and is by a key the project registered to the reviewer it names (or a certificate the CA
    given issued); `said` is one sentence a signature, `problems` what is wrong."""

    valid: bool
    said: tuple[str, ...]
    problems: tuple[str, ...]

    def __str__(self) -> str:
        return "; ".join(self.problems or self.said)


# What pyHanko's difference analysis says a later revision did, in words.
_CHANGES = {
    "NONE": "no object changed, but bytes were added",
    "LTA_UPDATES": "only archival data was added",
    "FORM_FILLING": "form fields were filled in",
    "ANNOTATIONS": "annotations were added",
    "OTHER": "it changes the document's content (a page can show other text)",
}


def check_report(path: Path, keys: Sequence[RegisteredKey] = (), ca: Sequence[x509.Certificate] = ()) -> ReportCheck:
    """Check a signed report against the project's registered keys and the CA certificates given:
    pyHanko validates each signature and says what it covers (a revision appended after the
    signature, which a reader shows instead of what was signed, is a change), and the certificate's
    key must be vouched for by a registered Ed25519 key of the reviewer it names, or the certificate
    must chain to a CA given (a self-signed certificate under another's name is not theirs).
    InvalidInput when the file cannot be read as a PDF."""
    from asn1crypto import x509 as asn1_x509
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    data = limits.read_bounded(path, limits.DOCUMENT, "a PDF report")
    roots = [asn1_x509.Certificate.load(c.public_bytes(serialization.Encoding.DER)) for c in ca]
    said: list[str] = []
    problems: list[str] = []
    try:
        reader = PdfFileReader(BytesIO(data), strict=False)
        signatures = reader.embedded_signatures
        if not signatures:
            return ReportCheck(False, (), ("the PDF is not signed",))
        for embedded in signatures:
            cert = x509.load_der_x509_certificate(embedded.signer_cert.dump())
            name = _common_name(cert.subject)
            key, whose = _registered_key_of(cert, name, keys)
            trusted = roots + ([embedded.signer_cert] if key is not None else [])
            status = validate_pdf_signature(embedded, ValidationContext(trust_roots=trusted))
            if not (status.intact and status.valid):
                problems.append(f"{name}'s signature does not match the file: it was changed where it was signed")
                continue
            if status.coverage != SignatureCoverageLevel.ENTIRE_FILE:
                end = int(embedded.byte_range[2]) + int(embedded.byte_range[3])  # where the signed bytes end
                level = status.modification_level.name if status.modification_level is not None else ""
                change = _CHANGES.get(level, "pyHanko cannot tell what it changes")
                problems.append(
                    f"{len(data) - end:,} bytes were added after {name}'s signature (a later revision: {change}), "
                    "so what a reader shows is not what was signed"
                )
            if not status.trusted:
                problems.append(whose if key is None else f"{name}'s certificate is not valid now ({status.summary()})")
                continue
            if key is not None and key.retired_at is not None and status.signer_reported_dt is not None:
                retired = _aware(key.retired_at)
                if status.signer_reported_dt > retired:
                    problems.append(f"{name} signed with a key retired on {retired:%Y-%m-%d}, which signs nothing more")
            issuer = _common_name(cert.issuer)
            by = f"with their registered key {key.fingerprint[:16]}" if key else f"with a certificate {issuer} issued"
            said.append(f"signed by {name} {by}")
    except InvalidInput:
        raise
    except Exception as exc:  # pyHanko raises many types for a damaged file
        raise InvalidInput(str(path), f"cannot read this signed PDF ({exc})") from exc
    if not problems:
        said[-1] += "; the file is as signed"
    return ReportCheck(not problems, tuple(said), tuple(problems))


def _common_name(name: x509.Name) -> str:
    names = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    value = names[0].value if names else ""
    return str(value) or "someone unnamed"


def _registered_key_of(
    cert: x509.Certificate, name: str, keys: Sequence[RegisteredKey]
) -> tuple[RegisteredKey | None, str]:
    """The registered key of the reviewer the certificate names that vouches for its key, or None and
    why not."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    named = cert.subject.get_attributes_for_oid(NameOID.SERIAL_NUMBER)
    fingerprint = str(named[0].value) if named else ""
    binding = _binding_of(cert)
    public = cert.public_key()
    key = next((k for k in keys if k.fingerprint == fingerprint), None)
    not_theirs = f"the certificate names {name}, but its key is not a registered key of {name}'s"
    if key is None:
        return None, f"{not_theirs} (anyone can make a certificate under any name)"
    if key.reviewer != name:
        return None, f"{not_theirs}: the key it names is {key.reviewer}'s"
    try:
        if binding is None or not isinstance(public, ec.EllipticCurvePublicKey):
            raise InvalidSignature
        Ed25519PublicKey.from_public_bytes(unb64(key.public_key)).verify(binding, _binding_message(name, public))
    except (InvalidSignature, ValueError):
        return None, f"{not_theirs}: their key {key.fingerprint[:16]} did not vouch for it"
    return key, ""


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def validate_pdf(path: Path, trust: list[x509.Certificate]) -> tuple[bool, str]:
    """`check_report` trusting only the certificates given (a firm's CA): (all valid, summary)."""
    check = check_report(path, ca=trust)
    return check.valid, str(check)
