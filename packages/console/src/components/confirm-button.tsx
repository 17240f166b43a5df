import { useState, type ReactNode } from 'react';
import { Button, Group, Modal, Stack, Text, type ButtonProps } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from './error-alert';

interface ConfirmButtonProps extends ButtonProps {
  /** The button that opens the dialog. */
  label: ReactNode;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
  /** Extra content in the dialog (a reason field). */
  children?: ReactNode;
  confirmDisabled?: boolean;
  destructive?: boolean;
}

/** A button whose action waits for a confirmation in a dialog, which shows the API's error if the action fails. */
export function ConfirmButton({ label, title, message, confirmLabel, onConfirm, children, confirmDisabled, destructive = true, ...button }: ConfirmButtonProps) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const close = () => {
    setOpen(false);
    setError(null);
  };
  return (
    <>
      <Button color={destructive ? 'red.9' : undefined} {...button} onClick={() => setOpen(true)}>
        {label}
      </Button>
      <Modal opened={open} onClose={close} title={title} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <Stack>
          <Text>{message}</Text>
          {children}
          <ErrorAlert error={error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              {t('common.cancel')}
            </Button>
            <Button
              color={destructive ? 'red.9' : undefined}
              loading={busy}
              disabled={confirmDisabled}
              onClick={async () => {
                setBusy(true);
                setError(null);
                try {
                  await onConfirm();
                  close();
                } catch (failure) {
                  setError(failure);
                } finally {
                  setBusy(false);
                }
              }}
            >
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
