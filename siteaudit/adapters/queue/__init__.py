"""The work queue on Dramatiq: RabbitMQ in production, an in-process broker for the embedded default."""
