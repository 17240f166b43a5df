import { useState, type ReactNode } from 'react';
import { Button, Group, Modal, Stack, type ButtonProps } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from '../../../components/error-alert';

interface EditDialogProps extends ButtonProps {
  /** The button that opens the dialog. */
  label: ReactNode;
  'aria-label'?: string;
  title: string;
  submitLabel: string;
  /** Called when the dialog opens, to load the current values into the form. */
  onOpen?: () => void;
  onSubmit: () => Promise<unknown>;
  children: ReactNode;
}

/** A button opening a dialog with a form; the dialog stays open and shows the API's detail when the change is refused. */
export function EditDialog({ label, title, submitLabel, onOpen, onSubmit, children, ...button }: EditDialogProps) {
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
      <Button
        variant="default"
        {...button}
        onClick={() => {
          onOpen?.();
          setOpen(true);
        }}
      >
        {label}
      </Button>
      <Modal opened={open} onClose={close} title={title} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            setBusy(true);
            setError(null);
            try {
              await onSubmit();
              close();
            } catch (failure) {
              setError(failure);
            } finally {
              setBusy(false);
            }
          }}
        >
          <Stack>
            {children}
            <ErrorAlert error={error} />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                {t('common.cancel')}
              </Button>
              <Button type="submit" loading={busy}>
                {submitLabel}
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}
