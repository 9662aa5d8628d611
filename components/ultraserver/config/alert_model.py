"""The Capacity Block alerts' settings: EventBridge rules about the stack's reservations, sent to an SNS topic."""

from __future__ import annotations

from pydantic import Field, StrictBool

from ultraserver.config.fields import EmailAddress, Model, SnsTopicArn


class AlertSettings(Model):
    """Capacity Block alerts: EventBridge rules about the stack's reservations, sent to an SNS topic."""

    enabled: StrictBool | None = Field(
        None, description="Declare the alerts; default: on when the stack has GPU node groups."
    )
    sns_topic_arn: SnsTopicArn = Field(
        "", description="Existing SNS topic (it must let EventBridge publish); empty creates an encrypted one."
    )
    email_subscriptions: tuple[EmailAddress, ...] = Field(
        (), description="E-mail addresses subscribed to the topic (each confirms from the mail AWS sends)."
    )
