"""Payment providers behind `siteaudit.ports.payment.PaymentProvider`: Stripe, and the local test provider."""
